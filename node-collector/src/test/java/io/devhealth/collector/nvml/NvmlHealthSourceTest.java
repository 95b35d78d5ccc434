package io.devhealth.collector.nvml;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.avro.SourceState;
import io.devhealth.schema.avro.SourceStatus;
import io.devhealth.simulators.nvml.NvmlStub;
import io.devhealth.testkit.time.MutableClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The NVML source end to end through the stub libnvidia-ml.so.1: event thread, polls, policy, reports. */
class NvmlHealthSourceTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private final RecordingNvmlListener recorder = new RecordingNvmlListener();
    private NvmlStub stub;
    private NvmlHealthSource source;

    private static NvmlConfig fastConfig(NvmlStub stub) {
        return fast(stub == null ? null : stub.libraryPath()).build();
    }

    /**
     * Timings a test can wait for: 100 ms polls, 20 ms evaluations, 100 ms re-initialisation; 500 ms event waits: the stuck-loop check calls every GPU Unknown after 3 waits + 2
     * evaluations of silence from the event thread, and with a 50 ms wait that was 190 ms, less than a loaded
     * 2-core machine can promise a thread (a loop draining an event storm was descheduled for longer, and both GPUs
     * went Unknown mid-test). With 500 ms it is 1.54 s: still far below the production 15 s, and a wait that never
     * returns (what the check is for) still trips it. The wait returns at once when an event is queued, so events
     * are not slower; closing a source waits for the current wait to end.
     */
    private static NvmlConfig.Builder fast(Path libraryPath) {
        return NvmlConfig.builder().libraryPath(libraryPath).pollInterval(Duration.ofMillis(100))
                .eventWaitTimeout(Duration.ofMillis(500)).evaluateInterval(Duration.ofMillis(20)).reinitInterval(Duration.ofMillis(100));
    }

    private void start(NvmlConfig config, Clock clock) {
        source = NvmlHealthSource.create(config, "c1", "node-a", recorder, clock);
        source.start();
    }

    private static String gpu(int index) {
        return NvmlStub.defaultUuid(index);
    }

    private void awaitHealth(String uuid, HealthStatus health, String messagePart) {
        recorder.awaitHealth(uuid, health, messagePart, WAIT);
    }

    @AfterEach
    void stop() {
        if (source != null) {
            source.close();
        }
        if (stub != null) {
            stub.close();
        }
    }

    @Test
    void shouldReportEveryGpuHealthyByUuidOnly() {
        stub = NvmlStub.load(2);
        start(fastConfig(stub), Clock.systemUTC());
        awaitHealth(gpu(0), HealthStatus.HEALTHY, null);
        awaitHealth(gpu(1), HealthStatus.HEALTHY, null);
        DeviceHealthReport report = recorder.latest(gpu(0));
        assertThat(report.getSource()).isEqualTo(SourceKind.NVML);
        assertThat(report.getSourceName()).isEqualTo("nvml");
        assertThat(report.getKind()).isEqualTo(ReportKind.CHANGE);
        assertThat(report.getDevice().getDriver()).isEmpty();
        assertThat(report.getDevice().getDevice()).isEmpty();
        assertThat(report.getNode()).isEqualTo("node-a");
        assertThat(report.getTimeoutSeconds()).isEqualTo(30L);
        assertThat(source.sourceState().getState()).isEqualTo(SourceStatus.UP);
        assertThat(source.devices()).extracting(GpuInfo::uuid).containsExactly(gpu(0), gpu(1));
        assertThat(source.devices().get(1).pciBusId()).isEqualTo("00000000:19:00.0");
    }

    @Test
    void shouldKeepFatalXidUnhealthyUntilResetIsDetected() {
        stub = NvmlStub.load(2);
        start(fastConfig(stub), Clock.systemUTC());
        awaitHealth(gpu(0), HealthStatus.HEALTHY, null);
        stub.queueXid(0, 48).setVolatileUncorrectedEcc(0, 2);
        awaitHealth(gpu(0), HealthStatus.UNHEALTHY, "XID 48: Double Bit ECC Error");
        assertThat(recorder.latest(gpu(0)).getReason()).isEqualTo("XID-48");
        // The XID is judged as soon as it arrives; the ECC counter joins the message at the next reading.
        awaitHealth(gpu(0), HealthStatus.UNHEALTHY, "2 uncorrectable ECC errors since the driver loaded");
        assertThat(recorder.latest(gpu(0)).getMessage()).contains("XID 48: Double Bit ECC Error");
        // Sticky: the ECC count alone clearing (a reset) is what recovers it, and the message says why.
        stub.resetGpu(0);
        awaitHealth(gpu(0), HealthStatus.HEALTHY, "GPU reset detected: volatile ECC counters restarted");
        assertThat(recorder.latest(gpu(1)).getHealth()).isEqualTo(HealthStatus.HEALTHY);
    }

    @Test
    void shouldMarkLostGpuUnhealthyAndRecoverWhenItAnswersAgainAfterReset() {
        stub = NvmlStub.load(2);
        start(fastConfig(stub), Clock.systemUTC());
        awaitHealth(gpu(1), HealthStatus.HEALTHY, null);
        stub.queueXid(1, 79);
        awaitHealth(gpu(1), HealthStatus.UNHEALTHY, "XID 79: GPU has fallen off the bus");
        stub.setLost(1, true);
        awaitHealth(gpu(1), HealthStatus.UNHEALTHY, "GPU is lost");
        assertThat(recorder.latest(gpu(0)).getHealth()).isEqualTo(HealthStatus.HEALTHY);
        stub.resetGpu(1);
        awaitHealth(gpu(1), HealthStatus.HEALTHY, "GPU reset detected: GPU reachable again after being lost");
        assertThat(recorder.latest(gpu(1)).getMessage()).doesNotContain("XID 79");
    }

    @Test
    void shouldKeepApplicationXidHealthyWithMessageAndExpireIt() {
        stub = NvmlStub.load(1);
        MutableClock clock = MutableClock.at("2026-01-01T00:00:00Z");
        start(fastConfig(stub), clock);
        awaitHealth(gpu(0), HealthStatus.HEALTHY, null);
        stub.queueXid(0, 13);
        awaitHealth(gpu(0), HealthStatus.HEALTHY, "XID 13: Graphics Engine Exception");
        assertThat(recorder.latest(gpu(0)).getReason()).isEqualTo("XID-13");
        clock.advance(Duration.ofSeconds(301));
        awaitHealth(gpu(0), HealthStatus.HEALTHY, null);
    }

    @Test
    void shouldKeepAGpuWithAContainedEccErrorHealthyDespiteTheEccCounter() {
        stub = NvmlStub.load(2);
        stub.setSupportedEvents(1, 0);
        start(fastConfig(stub), Clock.systemUTC());
        awaitHealth(gpu(0), HealthStatus.HEALTHY, null);
        awaitHealth(gpu(1), HealthStatus.HEALTHY, "XID events not supported");
        // XID 94: the error was contained to one application; the uncorrected counter counts it all the same.
        stub.queueXid(0, 94).setVolatileUncorrectedEcc(0, 1);
        awaitHealth(gpu(0), HealthStatus.HEALTHY, "1 uncorrectable ECC errors since the driver loaded; each is judged by its XID");
        assertThat(recorder.latest(gpu(0)).getMessage()).contains("XID 94: Contained memory error [RESTART_APP: ");
        assertThat(recorder.of(gpu(0))).noneMatch(r -> r.getHealth() == HealthStatus.UNHEALTHY);
        // Where XIDs are not watched the counter is the only signal, and it still says Unhealthy.
        stub.setVolatileUncorrectedEcc(1, 1);
        awaitHealth(gpu(1), HealthStatus.UNHEALTHY, "1 uncorrectable ECC errors since the driver loaded");
        assertThat(recorder.latest(gpu(1)).getMessage()).doesNotContain("judged by its XID");
    }

    @Test
    void shouldLeaveAnNvlink5XidToTheRecoveryActionTheDriverPublishes() {
        stub = NvmlStub.load(1);
        start(fastConfig(stub), Clock.systemUTC());
        awaitHealth(gpu(0), HealthStatus.HEALTHY, null);
        stub.queueXid(0, 145);
        awaitHealth(gpu(0), HealthStatus.HEALTHY, "XID 145: NVLINK: RLW Error [WORKFLOW_NVLINK5_ERR: ");
        // A fatal one comes with a changed recovery action, and that keeps the GPU Unhealthy until the reset.
        stub.setRecoveryAction(0, NvmlStub.RECOVERY_GPU_RESET);
        awaitHealth(gpu(0), HealthStatus.UNHEALTHY, "NVML recovery action: GPU reset required");
        stub.resetGpu(0);
        awaitHealth(gpu(0), HealthStatus.HEALTHY, "GPU reset detected: recovery action returned to none");
    }

    @Test
    void shouldIgnoreXidsThePolicyFileIgnores(@TempDir Path dir) throws Exception {
        Path policy = dir.resolve("policy.json");
        Files.writeString(policy, "{\"xids\": {\"31\": {\"action\": \"IGNORE\"}, \"43\": {\"action\": \"UNHEALTHY\", \"description\": \"stopped\"}}}");
        stub = NvmlStub.load(1);
        start(fast(stub.libraryPath()).policyFile(policy).build(), Clock.systemUTC());
        awaitHealth(gpu(0), HealthStatus.HEALTHY, null);
        stub.queueXid(0, 31).queueXid(0, 43);
        awaitHealth(gpu(0), HealthStatus.UNHEALTHY, "XID 43: stopped");
        assertThat(recorder.reports).noneMatch(r -> r.getMessage() != null && r.getMessage().contains("XID 31"));
    }

    @Test
    void shouldTurnReadingsIntoReadableFindings() {
        stub = NvmlStub.load(4);
        start(fastConfig(stub), Clock.systemUTC());
        awaitHealth(gpu(3), HealthStatus.HEALTHY, null);
        stub.setTemperature(0, 91).setClocksEventReasons(0, NvmlStub.CLOCKS_HW_THERMAL);
        stub.setRemappedRows(1, 0, 5, false, true);
        stub.setNvLinkActive(2, 4, false);
        stub.setRecoveryAction(3, NvmlStub.RECOVERY_NODE_REBOOT);
        awaitHealth(gpu(0), HealthStatus.HEALTHY, "temperature 91 °C at or above slowdown 90 °C");
        assertThat(recorder.latest(gpu(0)).getMessage()).contains("clocks slowed: HW thermal slowdown");
        awaitHealth(gpu(1), HealthStatus.UNHEALTHY, "row remapping failed");
        awaitHealth(gpu(2), HealthStatus.UNHEALTHY, "NVLink link 4 down");
        awaitHealth(gpu(3), HealthStatus.UNHEALTHY, "NVML recovery action: node reboot required");
        // Level-based: the findings clear with the readings.
        stub.setTemperature(0, 60).setClocksEventReasons(0, 0).setNvLinkActive(2, 4, true);
        awaitHealth(gpu(0), HealthStatus.HEALTHY, null);
        awaitHealth(gpu(2), HealthStatus.HEALTHY, null);
        // The recovery action returning to none is itself reset evidence.
        stub.setRecoveryAction(3, NvmlStub.RECOVERY_NONE);
        awaitHealth(gpu(3), HealthStatus.HEALTHY, "GPU reset detected: recovery action returned to none");
    }

    @Test
    void shouldCoalesceAnXidStormWithoutStarvingOtherGpus() {
        stub = NvmlStub.load(2);
        MutableClock clock = MutableClock.at("2026-01-01T00:00:00Z");
        start(fast(stub.libraryPath()).build(), clock);
        awaitHealth(gpu(1), HealthStatus.HEALTHY, null);
        int before = recorder.reports.size();
        recorder.stubAtReport[0] = stub;
        stub.queueEvents(0, NvmlStub.EVENT_XID, 31, NvmlStub.NO_INSTANCE, NvmlStub.NO_INSTANCE, 400_000)
                .queueXid(1, 79)
                .queueEvents(0, NvmlStub.EVENT_XID, 31, NvmlStub.NO_INSTANCE, NvmlStub.NO_INSTANCE, 400_000);
        awaitHealth(gpu(1), HealthStatus.UNHEALTHY, "XID 79");
        await().atMost(Duration.ofSeconds(60)).until(() -> stub.pendingEvents() == 0);
        int gpu1Index = -1;
        List<DeviceHealthReport> after = recorder.reports.subList(before, recorder.reports.size());
        for (int i = 0; i < after.size(); i++) {
            if (gpu(1).equals(after.get(i).getDevice().getUuid()) && after.get(i).getHealth() == HealthStatus.UNHEALTHY) {
                gpu1Index = i;
                break;
            }
        }
        // GPU 1's failure went out while GPU 0's storm was still being drained, not after it.
        assertThat(recorder.pendingAtReport.get(gpu1Index)).isPositive();
        assertThat(stub.deliveredEvents()).isEqualTo(800_001);
        // 800,000 events, one report for GPU 0 (the storm keeps its health and reasons).
        assertThat(after.stream().filter(r -> gpu(0).equals(r.getDevice().getUuid()))).hasSize(1);
        // The keep-alive carries the count.
        clock.advance(Duration.ofSeconds(16));
        await().atMost(WAIT).untilAsserted(() -> {
            DeviceHealthReport keepAlive = recorder.latest(gpu(0));
            assertThat(keepAlive.getKind()).isEqualTo(ReportKind.KEEPALIVE);
            assertThat(keepAlive.getMessage()).startsWith("XID 31: GPU memory page fault [RESTART_APP: restart the application; the GPU needs no action] (800000 times, 2026-01-01T00:00:");
            assertThat(keepAlive.getHealth()).isEqualTo(HealthStatus.HEALTHY);
        });
    }

    @Test
    void shouldSendKeepAlivesAtHalfTheTimeout() {
        stub = NvmlStub.load(1);
        MutableClock clock = MutableClock.at("2026-01-01T00:00:00Z");
        start(fast(stub.libraryPath()).healthTimeout(Duration.ofSeconds(20)).build(), clock);
        awaitHealth(gpu(0), HealthStatus.HEALTHY, null);
        clock.advance(Duration.ofSeconds(9));
        assertThat(recorder.of(gpu(0))).hasSize(1);
        clock.advance(Duration.ofSeconds(1));
        await().atMost(WAIT).until(() -> recorder.of(gpu(0)).size() == 2);
        assertThat(recorder.latest(gpu(0)).getKind()).isEqualTo(ReportKind.KEEPALIVE);
        assertThat(recorder.latest(gpu(0)).getTimeoutSeconds()).isEqualTo(20L);
    }

    @Test
    void shouldRegisterOnlySupportedEventsAndSayWhenXidsAreNotWatched() {
        stub = NvmlStub.load(2);
        stub.setSupportedEvents(0, NvmlStub.EVENT_XID | NvmlStub.EVENT_SINGLE_BIT_ECC | NvmlStub.EVENT_DOUBLE_BIT_ECC);
        stub.setSupportedEvents(1, 0);
        start(fastConfig(stub), Clock.systemUTC());
        awaitHealth(gpu(1), HealthStatus.HEALTHY, "XID events not supported");
        awaitHealth(gpu(0), HealthStatus.HEALTHY, null);
        // Single-bit ECC is IGNORE by default, so it is not even registered.
        assertThat(stub.registeredEvents(0)).isEqualTo(NvmlStub.EVENT_XID | NvmlStub.EVENT_DOUBLE_BIT_ECC);
        assertThat(stub.registeredEvents(1)).isZero();
        // Readings still work on the unmonitored GPU.
        stub.setRemappedRows(1, 0, 1, true, false);
        awaitHealth(gpu(1), HealthStatus.UNHEALTHY, "row remapping pending: GPU reset required");
        stub.queueEvents(0, NvmlStub.EVENT_DOUBLE_BIT_ECC, 0, NvmlStub.NO_INSTANCE, NvmlStub.NO_INSTANCE, 1);
        awaitHealth(gpu(0), HealthStatus.UNHEALTHY, "double-bit ECC error");
        assertThat(recorder.latest(gpu(0)).getReason()).isEqualTo("DOUBLE-BIT-ECC");
    }

    @Test
    void shouldReportMissingLibraryAsUnsupportedWithoutCrashing(@TempDir Path empty) {
        start(fast(empty.resolve("libnvidia-ml.so.1")).build(), Clock.systemUTC());
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(source.sourceState().getState()).isEqualTo(SourceStatus.UNSUPPORTED);
            assertThat(source.sourceState().getMessage()).contains("libnvidia-ml.so.1");
        });
        assertThat(recorder.reports).isEmpty();
        assertThat(recorder.states).extracting(SourceState::getState).contains(SourceStatus.UNSUPPORTED);
    }

    @Test
    void shouldRetryWhenTheDriverIsNotLoadedAndMarkKnownGpusUnknown() {
        stub = NvmlStub.load(1);
        stub.setInitResult(NvmlStub.ERROR_DRIVER_NOT_LOADED);
        start(fastConfig(stub), Clock.systemUTC());
        await().atMost(WAIT).until(() -> source.sourceState().getState() == SourceStatus.DOWN
                && source.sourceState().getMessage().contains("ERROR_DRIVER_NOT_LOADED"));
        stub.setInitResult(NvmlStub.SUCCESS);
        awaitHealth(gpu(0), HealthStatus.HEALTHY, null);
        assertThat(source.sourceState().getState()).isEqualTo(SourceStatus.UP);
    }

    @Test
    void shouldReportMigInstancesWithParentUuidAndInstanceIds() {
        stub = NvmlStub.load(1);
        stub.setMig(0, new int[] {1, 2}, new int[] {0, 0});
        start(fastConfig(stub), Clock.systemUTC());
        await().atMost(WAIT).until(() -> recorder.latestMig(gpu(0), 2, 0) != null);
        stub.queueEvents(0, NvmlStub.EVENT_XID, 94, 2, 0, 1);
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(recorder.latestMig(gpu(0), 2, 0).getMessage()).contains("XID 94: Contained memory error");
        });
        assertThat(recorder.latestMig(gpu(0), 1, 0).getMessage()).isNull();
        assertThat(recorder.latest(gpu(0)).getMessage()).isNull();
        // An event no instance can be blamed for hits the GPU and therefore every instance.
        stub.queueXid(0, 79);
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(recorder.latestMig(gpu(0), 1, 0).getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
            assertThat(recorder.latest(gpu(0)).getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
        });
        assertThat(source.devices().get(0).migInstances()).extracting(GpuInfo.MigInstance::gpuInstanceId).containsExactly(1, 2);
    }

    @Test
    void shouldShutNvmlDownOnClose() {
        stub = NvmlStub.load(1);
        start(fastConfig(stub), Clock.systemUTC());
        awaitHealth(gpu(0), HealthStatus.HEALTHY, null);
        assertThat(stub.initCount()).isEqualTo(1);
        source.close();
        assertThat(stub.initCount()).isZero();
        assertThat(stub.registeredEvents(0)).isZero();
        assertThat(source.sourceState().getState()).isEqualTo(SourceStatus.DOWN);
    }
}
