package io.devhealth.collector.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.collector.CollectorConfig;
import io.devhealth.collector.NodeCollector;
import io.devhealth.collector.RecordingPublisher;
import io.devhealth.collector.nvml.NvmlConfig;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.SourceStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The collector against a DRA driver, its plugin registration and a kubelet PodResources server that
 * are not grpc-java: Node's grpc-js ({@code src/test/node/server.js}), built from the same .proto files.
 * Node's HTTP/2 layer resets every stream whose {@code :authority} is not a valid URI authority, so
 * these tests fail if the collector's unix-socket channels send anything but a host name there.
 */
class GrpcJsInteropIT {

    private static final String DRIVER = "gpu.example.com";
    private static final String NODE = "node-a";
    private static final Duration WAIT = Duration.ofSeconds(30);

    private static Path installDir;

    @TempDir
    Path tmp;

    private final RecordingPublisher publisher = new RecordingPublisher();
    private GrpcJsServers servers;
    private NodeCollector collector;

    @BeforeAll
    static void installGrpcJs() throws Exception {
        installDir = GrpcJsServers.install();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (collector != null) {
            collector.close();
        }
        if (servers != null) {
            servers.close();
        }
    }

    private static Map<String, Object> device(String name, String health, String message) {
        return Map.of("pool", "pool-a", "device", name, "health", health, "message", message, "timeoutSeconds", 30);
    }

    /** A pod whose container holds a ResourceClaim for {@code device} of the driver, as the kubelet lists it. */
    private static Map<String, Object> podUsing(String namespace, String pod, String claim, String device) {
        Map<String, Object> claimResource = Map.of("driver_name", DRIVER, "pool_name", "pool-a", "device_name", device,
                "cdi_devices", List.of(Map.of("name", DRIVER + "/gpu=" + device)));
        Map<String, Object> dynamic = Map.of("claim_name", claim, "claim_namespace", namespace, "claim_resources", List.of(claimResource));
        Map<String, Object> container = Map.of("name", "main", "dynamic_resources", List.of(dynamic));
        return Map.of("name", pod, "namespace", namespace, "containers", List.of(container));
    }

    /** Starts the grpc-js servers; a {@code null} service socket leaves {@code PluginInfo.endpoint} empty. */
    private void startServers(Path draSocket, List<Map<String, Object>> devices, List<Map<String, Object>> pods) throws Exception {
        Map<String, Object> config = new HashMap<>();
        config.put("registrationSocket", registry().resolve(DRIVER + "-reg.sock").toString());
        config.put("draSocket", draSocket == null ? null : draSocket.toString());
        config.put("podResourcesSocket", kubeletSocket().toString());
        config.put("driver", DRIVER);
        config.put("supportedVersions", List.of("v1.DRAPlugin", "v1alpha1.DRAResourceHealth"));
        config.put("devices", devices);
        config.put("podResources", pods);
        Files.createDirectories(registry());
        Files.createDirectories(plugins().resolve(DRIVER));
        servers = GrpcJsServers.start(installDir, tmp.resolve("grpc-js.json"), config);
    }

    private Path registry() {
        return tmp.resolve("registry");
    }

    /** The kubelet's plugins directory: a driver's DRA socket lies in {@code <plugins>/<driver>/}. */
    private Path plugins() {
        return tmp.resolve("plugins");
    }

    private Path kubeletSocket() {
        return tmp.resolve("kubelet.sock");
    }

    /** The collector as production assembles it: plugin registry watcher, DRA health streams, PodResources poller. */
    private void startCollector() {
        collector = new NodeCollector(new CollectorConfig(Map.ofEntries(
                Map.entry(CollectorConfig.NODE_NAME, NODE),
                Map.entry(CollectorConfig.BOOTSTRAP_SERVERS, "unused:9092"),
                Map.entry(CollectorConfig.SCHEMA_REGISTRY_URL, "mem://unused"),
                Map.entry(CollectorConfig.DRA_REGISTRY_DIR, registry().toString()),
                Map.entry(CollectorConfig.DRA_PLUGINS_DIR, plugins().toString()),
                Map.entry(CollectorConfig.DRA_REGISTRY_RESCAN_INTERVAL, "200"),
                Map.entry(CollectorConfig.DRA_GETINFO_TIMEOUT, "2000"),
                Map.entry(CollectorConfig.RECONNECT_BACKOFF_MAX, "400"),
                Map.entry(CollectorConfig.POD_RESOURCES_SOCKET, kubeletSocket().toString()),
                Map.entry(CollectorConfig.POD_RESOURCES_POLL_INTERVAL, "200"),
                Map.entry(CollectorConfig.HEARTBEAT_INTERVAL, "60000"),
                Map.entry(NvmlConfig.ENABLED, "false"))), publisher, Clock.systemUTC());
        collector.start();
    }

    private SourceStatus driverState() {
        return publisher.lastSourceState(DRIVER).map(s -> s.getState()).orElse(SourceStatus.UNKNOWN);
    }

    private DeviceHealthReport lastReport(String device) {
        List<DeviceHealthReport> reports = publisher.reportsFor(device);
        return reports.isEmpty() ? null : reports.get(reports.size() - 1);
    }


    @Test
    void shouldSeeTheDriverItsDevicesHealthAndTheAllocationsServedByGrpcJs() throws Exception {
        startServers(plugins().resolve(DRIVER).resolve("dra.sock"),
                List.of(device("gpu-0", "HEALTHY", ""), device("gpu-1", "UNHEALTHY", "XID 79")),
                List.of(podUsing("batch", "train-0", "gpu-claim", "gpu-1")));

        startCollector();

        await("the driver's health stream is up").atMost(WAIT).until(() -> driverState() == SourceStatus.UP);
        await("reports of gpu-0 and gpu-1").atMost(WAIT).until(() -> lastReport("gpu-0") != null && lastReport("gpu-1") != null);
        assertThat(lastReport("gpu-0").getHealth()).isEqualTo(HealthStatus.HEALTHY);
        assertThat(lastReport("gpu-1").getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(lastReport("gpu-1").getMessage()).isEqualTo("XID 79");
        assertThat(lastReport("gpu-1").getSourceName()).isEqualTo(DRIVER);
        assertThat(lastReport("gpu-1").getDevice().getPool()).isEqualTo("pool-a");

        await("an allocations snapshot from PodResources List").atMost(WAIT).until(() -> !publisher.allocations().isEmpty());
        assertThat(publisher.claimedDevices())
                .containsExactly("batch/train-0/gpu-claim -> " + DRIVER + "/pool-a/gpu-1");

        // A change on the open stream reaches the collector too, not only the first snapshot.
        servers.report(List.of(device("gpu-0", "UNHEALTHY", "XID 48"), device("gpu-1", "UNHEALTHY", "XID 79")));
        await("gpu-0 turns unhealthy on the open stream").atMost(WAIT).until(() -> lastReport("gpu-0").getHealth() == HealthStatus.UNHEALTHY);
        assertThat(lastReport("gpu-0").getMessage()).isEqualTo("XID 48");

        assertThat(servers.calls()).contains("Registration/GetInfo", "DRAResourceHealth/NodeWatchResources", "PodResourcesLister/List");
        assertThat(servers.calls()).doesNotContain("Registration/NotifyRegistrationStatus");
        assertThat(servers.authorities()).isNotEmpty().containsOnly("localhost");
    }

    @Test
    void shouldNotStreamFromTheRegistrationSocketWhenThePluginInfoEndpointIsEmpty() throws Exception {
        // An empty endpoint means the registration socket itself, in the registry every plugin shares: any
        // plugin could claim the driver that way, so the collector refuses it and asks again later.
        startServers(null, List.of(device("gpu-7", "UNHEALTHY", "XID 63")), List.of());

        startCollector();

        await("GetInfo asked again after the refusal").atMost(WAIT)
                .until(() -> servers.calls().stream().filter("Registration/GetInfo"::equals).count() >= 2);
        assertThat(servers.calls()).doesNotContain("DRAResourceHealth/NodeWatchResources");
        assertThat(lastReport("gpu-7")).isNull();
        assertThat(driverState()).isEqualTo(SourceStatus.UNKNOWN);
    }
}
