package io.devhealth.collector.nvml;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.SourceStatus;
import io.devhealth.simulators.nvml.NvmlStub;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sticky NVML findings across collector restarts: a restart is closing the source and starting a new
 * one over the same state directory and the same stub GPUs (which keep their counters, as a real GPU
 * does when only the collector restarts).
 */
class NvmlStickyFindingsTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;
    private Path stateDir;
    private Path bootId;
    private NvmlStub stub;
    private NvmlHealthSource source;
    private RecordingNvmlListener recorder;

    @BeforeEach
    void setUp() throws IOException {
        stateDir = dir.resolve("spool").resolve("nvml-sticky");
        bootId = dir.resolve("boot_id");
        Files.writeString(bootId, "6f1e1c8a-0000-4000-8000-000000000001\n");
    }

    @AfterEach
    void tearDown() {
        if (source != null) {
            source.close();
        }
        if (stub != null) {
            stub.close();
        }
    }

    private void startCollector() {
        if (source != null) {
            source.close();
        }
        recorder = new RecordingNvmlListener();
        NvmlConfig config = NvmlConfig.builder().libraryPath(stub.libraryPath())
                // The event wait of NvmlHealthSourceTest's fast timings: these assert the very first report, which a
                // loaded machine must not turn Unknown through the event-wait-stuck check (3 waits + 2 evaluations,
                // 1.54 s here).
                .pollInterval(Duration.ofMillis(100)).eventWaitTimeout(Duration.ofMillis(500))
                .evaluateInterval(Duration.ofMillis(20)).reinitInterval(Duration.ofMillis(100))
                .stateDirectory(stateDir).bootIdFile(bootId).build();
        source = NvmlHealthSource.create(config, "c1", "node-a", recorder, Clock.systemUTC());
        source.start();
    }

    private static String gpu(int index) {
        return NvmlStub.defaultUuid(index);
    }

    private Path file(int index) {
        return stateDir.resolve(gpu(index) + ".json");
    }

    private void awaitHealth(String uuid, HealthStatus health, String messagePart) {
        recorder.awaitHealth(uuid, health, messagePart, WAIT);
    }

    /** The first report of the GPU in this run. */
    private DeviceHealthReport first(String uuid) {
        await().atMost(WAIT).until(() -> !recorder.of(uuid).isEmpty());
        return recorder.of(uuid).get(0);
    }

    private void failGpu(int index, int xid, String message) {
        startCollector();
        awaitHealth(gpu(index), HealthStatus.HEALTHY, null);
        stub.queueXid(index, xid);
        awaitHealth(gpu(index), HealthStatus.UNHEALTHY, message);
    }

    @Test
    void shouldKeepStickyXidUnhealthyAcrossCollectorRestartUntilReset() throws IOException {
        stub = NvmlStub.load(2);
        failGpu(1, 79, "XID 79: GPU has fallen off the bus");
        // Written before the Unhealthy report went out.
        assertThat(file(1)).exists();
        assertThat(Files.readString(file(1))).contains("\"reason\" : \"XID-79\"").contains("6f1e1c8a-0000-4000-8000-000000000001");
        assertThat(file(0)).doesNotExist();

        startCollector();
        DeviceHealthReport first = first(gpu(1));
        assertThat(first.getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(first.getReason()).isEqualTo("XID-79");
        assertThat(first.getMessage()).contains("XID 79: GPU has fallen off the bus");
        assertThat(first(gpu(0)).getHealth()).isEqualTo(HealthStatus.HEALTHY);

        // Still held, and still kept: a second restart says the same.
        startCollector();
        assertThat(first(gpu(1)).getReason()).isEqualTo("XID-79");

        // Explicit recovery: the reset is seen, the finding is deleted from disk, and a restart stays Healthy.
        stub.resetGpu(1);
        awaitHealth(gpu(1), HealthStatus.HEALTHY, "GPU reset detected: energy counter restarted");
        assertThat(file(1)).doesNotExist();
        startCollector();
        assertThat(first(gpu(1)).getHealth()).isEqualTo(HealthStatus.HEALTHY);
    }

    @Test
    void shouldRecoverAfterRestartWhenTheGpuWasResetWhileTheCollectorWasDown() {
        stub = NvmlStub.load(1);
        failGpu(0, 48, "XID 48: Double Bit ECC Error");
        stub.setVolatileUncorrectedEcc(0, 2);
        awaitHealth(gpu(0), HealthStatus.UNHEALTHY, "2 uncorrectable ECC errors");
        source.close();
        stub.resetGpu(0);

        startCollector();
        // Never reported Unhealthy in this run: the first poll compared against the kept counters.
        DeviceHealthReport first = first(gpu(0));
        assertThat(first.getHealth()).isEqualTo(HealthStatus.HEALTHY);
        assertThat(first.getMessage()).contains("GPU reset detected: volatile ECC counters restarted");
        assertThat(recorder.of(gpu(0))).allMatch(r -> r.getHealth() == HealthStatus.HEALTHY);
        await().atMost(WAIT).until(() -> !Files.exists(file(0)));
    }

    @Test
    void shouldDropStickyFindingsAfterNodeReboot() throws IOException {
        stub = NvmlStub.load(1);
        failGpu(0, 79, "XID 79");
        source.close();
        Files.writeString(bootId, "6f1e1c8a-0000-4000-8000-000000000002\n");

        startCollector();
        DeviceHealthReport first = first(gpu(0));
        assertThat(first.getHealth()).as(first.toString()).isEqualTo(HealthStatus.HEALTHY);
        assertThat(first.getMessage()).contains("GPU reset detected: node rebooted since").contains("boot id changed");
        await().atMost(WAIT).until(() -> !Files.exists(file(0)));
    }

    @Test
    void shouldSetCorruptFileAsideAndKeepRunning() throws IOException {
        stub = NvmlStub.load(3);
        failGpu(1, 79, "XID 79");
        source.close();
        Files.writeString(file(0), "{\"version\": 1, \"uuid\": \"GPU-5a1d");
        Files.writeString(file(2), "{\"version\": 1, \"uuid\": \"" + gpu(2) + "\", \"findings\": [{\"reason\": \"XID-79\", "
                + "\"health\": \"BROKEN\", \"text\": \"x\", \"first\": \"yesterday\", \"last\": \"today\", \"count\": 1}]}");
        Files.writeString(stateDir.resolve("notes.txt"), "not a finding");

        startCollector();
        await().atMost(WAIT).until(() -> source.sourceState().getState() == SourceStatus.UP);
        assertThat(first(gpu(0)).getHealth()).isEqualTo(HealthStatus.HEALTHY);
        assertThat(first(gpu(2)).getHealth()).isEqualTo(HealthStatus.HEALTHY);
        // A bad entry costs only itself: GPU 1's good one still applies.
        assertThat(first(gpu(1)).getReason()).isEqualTo("XID-79");
        assertThat(file(0)).doesNotExist();
        assertThat(stateDir.resolve(gpu(0) + ".json.corrupt")).exists();
        assertThat(stateDir.resolve(gpu(2) + ".json.corrupt")).exists();
        // And the source keeps working on the GPU whose entry was bad.
        stub.queueXid(0, 48);
        awaitHealth(gpu(0), HealthStatus.UNHEALTHY, "XID 48");
        assertThat(file(0)).exists();
    }

    @Test
    void shouldDropStickyFindingOfAGpuNoLongerOnTheNode() {
        stub = NvmlStub.load(2);
        failGpu(1, 79, "XID 79");
        source.close();
        stub.setDeviceCount(1);

        startCollector();
        awaitHealth(gpu(0), HealthStatus.HEALTHY, null);
        await().atMost(WAIT).until(() -> !Files.exists(file(1)));
        assertThat(recorder.of(gpu(1))).isEmpty();
    }

    @Test
    void shouldKeepStickyFindingOfAGpuNvmlCannotIdentifyAsLost() {
        stub = NvmlStub.load(2);
        failGpu(1, 79, "XID 79");
        source.close();
        // Still off the bus: NVML counts it but cannot read its UUID.
        stub.setLost(1, true);

        startCollector();
        DeviceHealthReport first = first(gpu(1));
        assertThat(first.getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(first.getMessage()).contains("XID 79").contains("GPU is lost");
        assertThat(file(1)).exists();
        // Back after a reset: found again, recovered, deleted.
        stub.resetGpu(1);
        awaitHealth(gpu(1), HealthStatus.HEALTHY, "GPU reset detected: GPU reachable again after being lost");
        await().atMost(WAIT).until(() -> !Files.exists(file(1)));
    }

    @Test
    void shouldKeepMigInstanceFindingsAcrossRestart() {
        stub = NvmlStub.load(1);
        stub.setMig(0, new int[] {1, 2}, new int[] {0, 0});
        startCollector();
        await().atMost(WAIT).until(() -> recorder.latestMig(gpu(0), 2, 0) != null);
        stub.queueEvents(0, NvmlStub.EVENT_XID, 95, 2, 0, 1);
        await().atMost(WAIT).until(() -> recorder.latestMig(gpu(0), 2, 0).getHealth() == HealthStatus.UNHEALTHY);

        startCollector();
        await().atMost(WAIT).until(() -> recorder.latestMig(gpu(0), 2, 0) != null && recorder.latestMig(gpu(0), 1, 0) != null);
        List<DeviceHealthReport> instance = recorder.reports.stream()
                .filter(r -> Integer.valueOf(2).equals(r.getDevice().getMigGpuInstanceId())).toList();
        assertThat(instance.get(0).getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(instance.get(0).getMessage()).contains("XID 95: Uncontained memory error");
        assertThat(recorder.latestMig(gpu(0), 1, 0).getHealth()).isEqualTo(HealthStatus.HEALTHY);
    }
}
