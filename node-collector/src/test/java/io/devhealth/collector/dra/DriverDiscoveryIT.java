package io.devhealth.collector.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.collector.CollectorConfig;
import io.devhealth.collector.NodeCollector;
import io.devhealth.collector.RecordingPublisher;
import io.devhealth.collector.ops.CollectorMetrics;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceStatus;
import io.devhealth.simulators.dra.DeviceState;
import io.devhealth.simulators.dra.FakeDraDriver;
import io.devhealth.simulators.dra.FakePluginRegistration;
import io.grpc.Status;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Driver discovery through the plugin registry and the one-authoritative-stream rule, with fake
 * drivers and registration sockets on real unix sockets.
 */
class DriverDiscoveryIT {

    private static final String DRIVER = "gpu.example.com";
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path tmp;

    private Path registry;
    private Path plugins;
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final RecordingPublisher publisher = new RecordingPublisher();
    private final List<AutoCloseable> resources = new java.util.ArrayList<>();
    private NodeCollector collector;

    @BeforeEach
    void setUp() throws java.io.IOException {
        registry = tmp.resolve("registry");
        plugins = tmp.resolve("plugins");
        java.nio.file.Files.createDirectories(plugins.resolve(DRIVER));
    }

    /** Where the kubeletplugin library puts a driver's DRA socket: {@code <plugins>/<driver>/<name>}. */
    private Path driverSocket(String name) {
        return plugins.resolve(DRIVER).resolve(name);
    }

    @AfterEach
    void tearDown() throws Exception {
        if (collector != null) {
            collector.close();
        }
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
    }

    private <T extends AutoCloseable> T track(T resource) {
        resources.add(resource);
        return resource;
    }

    private NodeCollector startCollector(Map<String, String> extra) {
        Map<String, Object> values = new HashMap<>(Map.of(
                CollectorConfig.NODE_NAME, "node-a",
                CollectorConfig.BOOTSTRAP_SERVERS, "unused:9092",
                CollectorConfig.SCHEMA_REGISTRY_URL, "mem://unused",
                CollectorConfig.DRA_REGISTRY_DIR, registry.toString(),
                CollectorConfig.DRA_PLUGINS_DIR, plugins.toString(),
                CollectorConfig.DRA_REGISTRY_RESCAN_INTERVAL, "200",
                CollectorConfig.DRA_GETINFO_TIMEOUT, "2000",
                CollectorConfig.RECONNECT_BACKOFF_MAX, "400",
                CollectorConfig.POD_RESOURCES_SOCKET, tmp.resolve("no-kubelet.sock").toString(),
                CollectorConfig.HEARTBEAT_INTERVAL, "60000"));
        values.putAll(extra);
        collector = new NodeCollector(new CollectorConfig(values), publisher, new CollectorMetrics(meters), Clock.systemUTC());
        collector.start();
        return collector;
    }

    private FakeDraDriver driver(String socketName, Set<String> versions) {
        return track(FakeDraDriver.builder().driverName(DRIVER).serviceSocket(driverSocket(socketName)).healthVersions(versions).start());
    }

    private FakePluginRegistration register(String name, FakeDraDriver driver) {
        return track(FakePluginRegistration.serving(registry.resolve(name),
                FakePluginRegistration.draPlugin(DRIVER, driver.serviceSocket(), driver.supportedVersions())));
    }

    private SourceStatus sourceState() {
        return publisher.lastSourceState(DRIVER).map(s -> s.getState()).orElse(SourceStatus.UNKNOWN);
    }

    @Test
    void shouldDiscoverADriverAndSpeakV1WhereAdvertisedWithoutEverNotifyingIt() {
        FakeDraDriver driver = track(FakeDraDriver.builder().driverName(DRIVER).serviceSocket(driverSocket("d.sock"))
                .registrationDir(registry).healthVersions(Set.of(FakeDraDriver.V1ALPHA1, FakeDraDriver.V1)).start());
        driver.report(DeviceState.healthy("node-a", "gpu-0"), DeviceState.unhealthy("node-a", "gpu-1", "XID 79"));

        startCollector(Map.of());

        await().atMost(WAIT).until(() -> publisher.reports().size() >= 2);
        assertThat(driver.openStreams(FakeDraDriver.V1)).isEqualTo(1);
        assertThat(driver.openStreams(FakeDraDriver.V1ALPHA1)).isZero();
        assertThat(publisher.reportsFor("gpu-1").get(0).getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(publisher.reportsFor("gpu-1").get(0).getSourceName()).isEqualTo(DRIVER);
        await().atMost(WAIT).until(() -> sourceState() == SourceStatus.UP);
        assertThat(driver.registrationStatuses()).isEmpty();
    }

    @Test
    void shouldStreamOnlyFromTheNewestRegistrationOfADriverAndFallBackWhenItGoes() {
        FakeDraDriver old = driver("old.sock", Set.of(FakeDraDriver.V1ALPHA1));
        old.report(DeviceState.healthy("node-a", "gpu-0"));
        FakePluginRegistration oldRegistration = register(DRIVER + "-aaaa-reg.sock", old);
        startCollector(Map.of());
        old.awaitStreams(1, WAIT);
        await().atMost(WAIT).until(() -> publisher.reportsFor("gpu-0").size() == 1);

        // Rolling update: a second endpoint of the same driver registers.
        FakeDraDriver fresh = driver("new.sock", Set.of(FakeDraDriver.V1ALPHA1));
        fresh.report(DeviceState.unhealthy("node-a", "gpu-0", "XID 48"));
        FakePluginRegistration freshRegistration = register(DRIVER + "-bbbb-reg.sock", fresh);

        fresh.awaitStreams(1, WAIT);
        await().atMost(WAIT).until(() -> old.openStreams() == 0);
        await().atMost(WAIT).until(() -> publisher.reportsFor("gpu-0").stream().anyMatch(r -> r.getHealth() == HealthStatus.UNHEALTHY));

        // The old endpoint's stream ending never clears or overwrites the new one's data (upstream #140818).
        publisher.clear();
        old.report(DeviceState.healthy("node-a", "gpu-0"));
        old.breakStreams();
        fresh.report(DeviceState.unhealthy("node-a", "gpu-0", "XID 48"), DeviceState.healthy("node-a", "gpu-1"));
        await().atMost(WAIT).until(() -> publisher.reportsFor("gpu-1").size() == 1);
        assertThat(publisher.reportsFor("gpu-0")).isEmpty(); // unchanged on the authoritative stream: nothing to say
        assertThat(publisher.heartbeats()).allSatisfy(h -> assertThat(h.getSources()).allSatisfy(
                s -> assertThat(s.getState()).isEqualTo(SourceStatus.UP)));
        assertThat(fresh.streamsAccepted()).isEqualTo(1);

        // The newest registration goes away: the remaining older one takes over.
        freshRegistration.close();
        old.awaitStreams(1, WAIT);
        await().atMost(WAIT).until(() -> publisher.reportsFor("gpu-0").stream()
                .anyMatch(r -> r.getHealth() == HealthStatus.HEALTHY && r.getKind() == ReportKind.CHANGE));
        await().atMost(WAIT).until(() -> sourceState() == SourceStatus.UP);
        assertThat(oldRegistration.notifications()).isZero();
        assertThat(freshRegistration.notifications()).isZero();
    }

    @Test
    void shouldReportTheSourceDownNotTheDevicesUnhealthyWhenTheRegistrationIsRemoved() {
        FakeDraDriver driver = driver("d.sock", Set.of(FakeDraDriver.V1ALPHA1));
        driver.report(DeviceState.healthy("node-a", "gpu-0"));
        FakePluginRegistration registration = register(DRIVER + "-reg.sock", driver);
        startCollector(Map.of());
        await().atMost(WAIT).until(() -> sourceState() == SourceStatus.UP);
        int reportsBefore = publisher.reports().size();

        registration.close();

        await().atMost(WAIT).until(() -> sourceState() == SourceStatus.DOWN);
        assertThat(publisher.lastSourceState(DRIVER).orElseThrow().getMessage()).contains("registration");
        assertThat(publisher.reports()).hasSize(reportsBefore);
        await().atMost(WAIT).until(() -> driver.openStreams() == 0);

        // The driver registers again (restart): streaming resumes and the full snapshot is reported anew.
        register(DRIVER + "-reg.sock", driver);
        await().atMost(WAIT).until(() -> sourceState() == SourceStatus.UP);
        await().atMost(WAIT).until(() -> publisher.reports().size() == reportsBefore + 1);
    }

    @Test
    void shouldNotRetryADriverThatAnswersUnimplementedUntilItRegistersAgain() throws Exception {
        FakeDraDriver driver = driver("d.sock", Set.of(FakeDraDriver.V1ALPHA1));
        driver.report(DeviceState.healthy("node-a", "gpu-0"));
        FakePluginRegistration registration = register(DRIVER + "-reg.sock", driver);
        startCollector(Map.of());
        driver.awaitStreams(1, WAIT);

        driver.breakStreams(Status.UNIMPLEMENTED.withDescription("device health reporting is not supported by this driver"));

        await().atMost(WAIT).until(() -> sourceState() == SourceStatus.UNSUPPORTED);
        Thread.sleep(1_500); // several reconnect backoffs (max 400 ms) and rescans (200 ms)
        assertThat(driver.streamsAccepted()).isEqualTo(1);

        registration.close();
        register(DRIVER + "-reg.sock", driver);
        await().atMost(WAIT).until(() -> driver.streamsAccepted() == 2);
        await().atMost(WAIT).until(() -> sourceState() == SourceStatus.UP);
    }

    @Test
    void shouldOpenNoStreamForADriverThatDoesNotAdvertiseHealth() {
        FakeDraDriver driver = track(FakeDraDriver.builder().driverName(DRIVER).serviceSocket(driverSocket("d.sock"))
                .registrationDir(registry).healthVersions(Set.of(FakeDraDriver.V1ALPHA1))
                .supportedVersions(List.of(FakeDraDriver.DRA_PLUGIN_SERVICE)).start());
        startCollector(Map.of());

        await().atMost(WAIT).until(() -> sourceState() == SourceStatus.UNSUPPORTED);
        assertThat(driver.streamsAccepted()).isZero();
    }

    @Test
    void shouldKeepDiscoveringWhenRegistrationSocketsHangOrSendGarbage() {
        FakePluginRegistration hanging = track(FakePluginRegistration.hanging(registry.resolve("stuck.example.com-reg.sock")));
        track(FakePluginRegistration.garbage(registry.resolve("noise.example.com-reg.sock")));
        FakeDraDriver driver = driver("d.sock", Set.of(FakeDraDriver.V1ALPHA1));
        driver.report(DeviceState.healthy("node-a", "gpu-0"));
        register(DRIVER + "-reg.sock", driver);

        startCollector(Map.of());

        await().atMost(WAIT).until(() -> publisher.reportsFor("gpu-0").size() == 1);
        await().atMost(WAIT).until(() -> sourceState() == SourceStatus.UP);
        assertThat(hanging.socket()).exists();
    }

    @Test
    void shouldKeepAnEndpointThatSpeaksGarbageDownAndKeepServingTheOtherDrivers() {
        FakePluginRegistration garbage = track(FakePluginRegistration.garbage(tmp.resolve("garbage.sock")));
        FakeDraDriver good = track(FakeDraDriver.builder().driverName("nic.example.com").serviceSocket(tmp.resolve("nic.sock"))
                .start());
        good.report(DeviceState.healthy("node-a", "nic-0"));
        startCollector(Map.of(CollectorConfig.DRA_DRIVERS,
                DRIVER + "=" + garbage.socket() + ",nic.example.com=" + good.serviceSocket(),
                CollectorConfig.DRA_DISCOVERY_ENABLED, "false"));

        await().atMost(WAIT).until(() -> publisher.reportsFor("nic-0").size() == 1);
        await().atMost(WAIT).until(() -> publisher.lastSourceState(DRIVER).map(s -> s.getMessage()).orElse("")
                .matches("(?s).*(INTERNAL|UNAVAILABLE).*"));
        assertThat(sourceState()).isEqualTo(SourceStatus.DOWN);
        assertThat(publisher.reportsFor("gpu-0")).isEmpty();
    }

    @Test
    void shouldShowAStreamLossInTheHeartbeatAndReportTheFullSnapshotAfterReconnecting() {
        FakeDraDriver driver = driver("d.sock", Set.of(FakeDraDriver.V1ALPHA1));
        driver.report(DeviceState.healthy("node-a", "gpu-0"), DeviceState.healthy("node-a", "gpu-1"));
        startCollector(Map.of(CollectorConfig.DRA_DRIVERS, DRIVER + "=" + driver.serviceSocket(),
                CollectorConfig.DRA_DISCOVERY_ENABLED, "false",
                CollectorConfig.RECONNECT_BACKOFF_MAX, "3000"));
        await().atMost(WAIT).until(() -> publisher.reports().size() == 2);
        await().atMost(WAIT).until(() -> sourceState() == SourceStatus.UP);

        driver.breakStreams();

        await().atMost(WAIT).until(() -> sourceState() == SourceStatus.DOWN);
        assertThat(publisher.lastSourceState(DRIVER).orElseThrow().getMessage()).contains("UNAVAILABLE");
        // Reconnected: the diff was reset, so the unchanged devices are reported again as changes, not kept alive.
        await().atMost(WAIT).until(() -> publisher.reports().size() == 4);
        assertThat(publisher.reports().subList(2, 4)).allSatisfy(r -> assertThat(r.getKind()).isEqualTo(ReportKind.CHANGE));
        await().atMost(WAIT).until(() -> sourceState() == SourceStatus.UP);
    }

    private double refused(String reason) {
        return meters.find("devhealth.collector.dra.registrations.refused").tag("reason", reason).counters().stream()
                .mapToDouble(c -> c.count()).sum();
    }

    @Test
    void shouldRefuseRegistrationsThatClaimADriverOutsideItsPluginDirectoryAndKeepWatching() throws Exception {
        // A rogue plugin serves "all healthy" from its own directory and registers as the GPU driver, twice:
        // once pointing at its socket, once with an empty endpoint (its registration socket itself).
        java.nio.file.Files.createDirectories(plugins.resolve("rogue.example.com"));
        FakeDraDriver rogue = track(FakeDraDriver.builder().driverName(DRIVER)
                .serviceSocket(plugins.resolve("rogue.example.com").resolve("dra.sock")).healthVersions(Set.of(FakeDraDriver.V1ALPHA1))
                .start());
        rogue.report(DeviceState.healthy("node-a", "gpu-0"));
        track(FakePluginRegistration.serving(registry.resolve("rogue.example.com-reg.sock"),
                FakePluginRegistration.draPlugin(DRIVER, rogue.serviceSocket(), rogue.supportedVersions())));
        track(FakePluginRegistration.serving(registry.resolve("rogue2.example.com-reg.sock"),
                io.devhealth.schema.proto.pluginregistration.v1.PluginInfo.newBuilder().setType(FakeDraDriver.PLUGIN_TYPE)
                        .setName(DRIVER).addAllSupportedVersions(rogue.supportedVersions()).build()));
        // A name that is no DNS subdomain could not name a directory of its own.
        track(FakePluginRegistration.serving(registry.resolve("dotdot-reg.sock"),
                FakePluginRegistration.draPlugin("..", plugins.resolve("x.sock"), rogue.supportedVersions())));
        startCollector(Map.of());

        await().atMost(WAIT).until(() -> refused("endpoint_outside_driver_directory") >= 2 && refused("invalid_driver_name") >= 1);
        assertThat(rogue.streamsAccepted()).as("the rogue endpoint is never dialled").isZero();
        assertThat(collector.sources()).doesNotContainKey(DRIVER);

        // The genuine driver, registered afterwards, is found and streamed from.
        FakeDraDriver genuine = driver("dra.sock", Set.of(FakeDraDriver.V1ALPHA1));
        genuine.report(DeviceState.unhealthy("node-a", "gpu-0", "XID 79"));
        register(DRIVER + "-reg.sock", genuine);
        await().atMost(WAIT).until(() -> publisher.reportsFor("gpu-0").size() == 1);
        assertThat(publisher.reportsFor("gpu-0").get(0).getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(rogue.streamsAccepted()).isZero();
    }
}
