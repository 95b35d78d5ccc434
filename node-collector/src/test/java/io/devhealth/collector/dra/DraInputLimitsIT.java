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
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A DRA driver that sends more than the collector reads: a message over the inbound limit, a snapshot
 * over the device cap. Each is refused whole and counted, the driver's source is down meanwhile, and
 * the next good snapshot is reported in full.
 */
class DraInputLimitsIT {

    private static final String DRIVER = "gpu.example.com";
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final RecordingPublisher publisher = new RecordingPublisher();
    private FakeDraDriver driver;
    private NodeCollector collector;

    @AfterEach
    void tearDown() {
        if (collector != null) {
            collector.close();
        }
        if (driver != null) {
            driver.close();
        }
    }

    private void start(String version, int maxDevices) {
        driver = FakeDraDriver.builder().driverName(DRIVER).serviceSocket(tmp.resolve("dra.sock")).healthVersions(Set.of(version)).start();
        collector = new NodeCollector(new CollectorConfig(Map.ofEntries(
                Map.entry(CollectorConfig.NODE_NAME, "node-a"),
                Map.entry(CollectorConfig.BOOTSTRAP_SERVERS, "unused:9092"),
                Map.entry(CollectorConfig.SCHEMA_REGISTRY_URL, "mem://unused"),
                Map.entry(CollectorConfig.DRA_DRIVERS, DRIVER + "=" + driver.serviceSocket() + "@" + version),
                Map.entry(CollectorConfig.DRA_DISCOVERY_ENABLED, "false"),
                Map.entry(CollectorConfig.DRA_SNAPSHOT_MAX_DEVICES, Integer.toString(maxDevices)),
                Map.entry(CollectorConfig.RECONNECT_BACKOFF_MAX, "300"),
                Map.entry(CollectorConfig.POD_RESOURCES_SOCKET, tmp.resolve("no-kubelet.sock").toString()),
                Map.entry(CollectorConfig.HEARTBEAT_INTERVAL, "60000"))), publisher, new CollectorMetrics(meters), Clock.systemUTC());
        collector.start();
    }

    private double refused(String reason) {
        Counter counter = meters.find("devhealth.collector.dra.snapshots.refused").tags("driver", DRIVER, "reason", reason).counter();
        return counter == null ? 0 : counter.count();
    }

    private SourceStatus sourceState() {
        return publisher.lastSourceState(DRIVER).map(s -> s.getState()).orElse(SourceStatus.UNKNOWN);
    }

    private static List<DeviceState> devices(int count, String message) {
        return IntStream.range(0, count).mapToObj(i -> DeviceState.healthy("node-a", "gpu-" + i).withMessage(message)).toList();
    }

    @Test
    void shouldRefuseASixteenMebibyteMessageAndReportTheNextGoodSnapshot() {
        start(FakeDraDriver.V1, 1024);
        driver.report(devices(2, "boot"));
        await().atMost(WAIT).until(() -> publisher.reports().size() == 2);

        driver.report(DeviceState.unhealthy("node-a", "gpu-0", "x".repeat(16 * 1024 * 1024)), DeviceState.healthy("node-a", "gpu-1"));

        await().atMost(WAIT).until(() -> refused("message_too_large") >= 1);
        await().atMost(WAIT).until(() -> sourceState() == SourceStatus.DOWN);
        assertThat(publisher.lastSourceState(DRIVER).orElseThrow().getMessage())
                .contains("snapshot refused").contains("exceeds maximum size 4194304").contains("grpc.max.inbound.message.bytes");
        assertThat(publisher.reportsFor("gpu-0")).as("nothing of the refused message").hasSize(1);

        driver.report(DeviceState.unhealthy("node-a", "gpu-0", "XID 79"), DeviceState.healthy("node-a", "gpu-1"));

        await().atMost(WAIT).until(() -> publisher.reportsFor("gpu-0").size() == 2);
        assertThat(publisher.reportsFor("gpu-0").get(1).getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(publisher.reportsFor("gpu-0").get(1).getMessage()).isEqualTo("XID 79");
        await().atMost(WAIT).until(() -> sourceState() == SourceStatus.UP);
        // The source was down in between, so the unchanged device is reported afresh, not kept alive.
        await().atMost(WAIT).until(() -> publisher.reportsFor("gpu-1").size() == 2);
        assertThat(publisher.reportsFor("gpu-1").get(1).getKind()).isEqualTo(ReportKind.CHANGE);
    }

    @Test
    void shouldRefuseASnapshotOverTheDeviceCapWholeAndReportTheNextOneWithinIt() {
        start(FakeDraDriver.V1ALPHA1, 8);
        driver.report(devices(8, "boot"));
        await().atMost(WAIT).until(() -> publisher.reports().size() == 8);
        await().atMost(WAIT).until(() -> sourceState() == SourceStatus.UP);

        driver.report(devices(9, "one too many"));

        await().atMost(WAIT).until(() -> refused("too_many_devices") >= 1);
        await().atMost(WAIT).until(() -> sourceState() == SourceStatus.DOWN);
        assertThat(publisher.lastSourceState(DRIVER).orElseThrow().getMessage()).contains("more than 8 devices")
                .contains("dra.snapshot.max.devices");
        assertThat(publisher.reports()).as("no device of the refused snapshot, not even the first eight").hasSize(8)
                .noneMatch(r -> r.getMessage().equals("one too many"));

        driver.report(devices(8, "after"));

        await().atMost(WAIT).until(() -> publisher.reports().size() == 16);
        assertThat(publisher.reports().subList(8, 16)).allSatisfy(r -> {
            assertThat(r.getMessage()).isEqualTo("after");
            assertThat(r.getKind()).isEqualTo(ReportKind.CHANGE);
        });
        await().atMost(WAIT).until(() -> sourceState() == SourceStatus.UP);
    }
}
