package io.devhealth.processor.internals;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.avro.SourceStatus;
import java.time.Instant;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link KeepAlivePath} against the general path it shortcuts (as {@code NodeProcessor.apply} runs
 * it): on every report the shortcut takes, both must give the same device state.
 */
class KeepAlivePathTest {

    private static final String KEY = "n1/gpu.nvidia.com/n1/gpu-0";
    private static final String DRIVER = "gpu.nvidia.com";
    private static final long T0 = 1_764_410_400_000L;
    private static final DeviceRef REF = DeviceRef.newBuilder().setDriver(DRIVER).setPool("n1").setDevice("gpu-0").build();

    /** What the general path does with a report: nothing, keep a refresh, or write the device. */
    private record General(boolean unchanged, DeviceState merged, boolean onlyRefreshed) {}

    private static General general(DeviceState current, DeviceHealthReport report, long observedAt, long timeoutMs, NodeState node) {
        SourceReport known = current.source(report.getSource(), report.getSourceName());
        if (known != null && observedAt < known.observedAt()) {
            return new General(true, current, false);
        }
        SourceReport next = SourceReport.after(report, known, observedAt, timeoutMs, node.isDown(report.getSourceName()));
        DeviceState merged = current.withSourceMerged(next, node.nodeTime(), observedAt);
        return new General(merged.equals(current), merged, current.becomesWithRefresh(merged));
    }

    private static SourceReport source(SourceKind kind, String name, HealthStatus health, String message, long observedAt,
                                       long refreshedAt, long timeoutMs) {
        return new SourceReport(kind, name, health, message, message == null ? null : "XID-79", observedAt, refreshedAt, timeoutMs);
    }

    private static DeviceHealthReport report(ReportKind kind, SourceKind source, String name, HealthStatus health, String message,
                                             long observedAt) {
        return DeviceHealthReport.newBuilder().setNode("n1").setSource(source).setSourceName(name).setDevice(REF).setHealth(health)
                .setKind(kind).setMessage(message).setReason(message == null ? null : "XID-79")
                .setObservedAt(Instant.ofEpochMilli(observedAt)).build();
    }

    private static NodeState node(long nodeTime, boolean sourceDown) {
        return NodeState.empty("c").withReport(NodeState.Watermark.NONE, nodeTime)
                .withSources(Map.of(DRIVER, new NodeState.Liveness(sourceDown ? SourceStatus.DOWN : SourceStatus.UP, T0, null)));
    }

    @Test
    void shouldMoveOnlyTheRefreshTimeOfAHealthyDevicesOnlySource() {
        SourceReport dra = source(SourceKind.DRA, DRIVER, HealthStatus.HEALTHY, null, T0, T0, 30_000L);
        DeviceState stored = DeviceState.empty("c", "n1", REF).withSourceMerged(dra, T0, T0);
        DeviceHealthReport keepAlive = report(ReportKind.KEEPALIVE, SourceKind.DRA, DRIVER, HealthStatus.HEALTHY, null, T0 + 15_000L);

        assertThat(KeepAlivePath.refreshedAt(stored, null, keepAlive, T0 + 15_000L, 30_000L, node(T0 + 15_000L, false)))
                .isEqualTo(T0 + 15_000L);
        PendingRefresh pending = new PendingRefresh(KEY, T0 + 45_000L, Map.of(dra.key(), T0 + 15_000L));
        assertThat(KeepAlivePath.refreshedAt(stored, pending, keepAlive, T0 + 15_000L, 30_000L, node(T0 + 15_000L, false)))
                .as("the same keep-alive again").isEqualTo(KeepAlivePath.UNCHANGED);
        assertThat(KeepAlivePath.refreshedAt(stored, null, keepAlive, T0 + 15_000L, 30_000L, node(T0 + 15_000L, true)))
                .as("from a source its node says is down").isEqualTo(KeepAlivePath.GENERAL);
        assertThat(KeepAlivePath.refreshedAt(stored, null, report(ReportKind.CHANGE, SourceKind.DRA, DRIVER, HealthStatus.HEALTHY, null,
                T0 + 15_000L), T0 + 15_000L, 30_000L, node(T0 + 15_000L, false))).as("a change").isEqualTo(KeepAlivePath.GENERAL);
        assertThat(KeepAlivePath.refreshedAt(stored, null, keepAlive, T0 + 15_000L, 60_000L, node(T0 + 15_000L, false)))
                .as("a new timeout").isEqualTo(KeepAlivePath.GENERAL);
        assertThat(KeepAlivePath.refreshedAt(stored, null, keepAlive, T0 + 15_000L, 30_000L, node(T0 + 45_000L, false)))
                .as("stale at the node's time even after it").isEqualTo(KeepAlivePath.GENERAL);
    }

    @Test
    void shouldAgreeWithTheGeneralPathOnEveryReportItTakes() {
        Random random = new Random(20261129L);
        HealthStatus[] healths = HealthStatus.values();
        String[] messages = {null, "XID 79: GPU has fallen off the bus"};
        int refreshed = 0;
        int unchanged = 0;
        for (int i = 0; i < 200_000; i++) {
            long timeoutMs = random.nextBoolean() ? 30_000L : 60_000L;
            long observed = T0 + random.nextInt(10_000);
            long refreshedAt = observed + random.nextInt(3) * 10_000L;
            SourceReport dra = source(SourceKind.DRA, DRIVER, healths[random.nextInt(3)], messages[random.nextInt(2)], observed,
                    refreshedAt, timeoutMs);
            DeviceState stored = DeviceState.empty("c", "n1", REF).withSourceMerged(dra, refreshedAt + random.nextInt(80_000), observed);
            switch (random.nextInt(12)) {
                case 0 -> stored = stored.withSourceMerged(source(SourceKind.NVML, "nvml", healths[random.nextInt(3)], null, observed,
                        observed, timeoutMs), refreshedAt, observed);
                case 1 -> stored = new DeviceState("c", "n1", DRIVER, "n1", "gpu-0", null, stored.sources(), healths[random.nextInt(3)],
                        stored.message(), stored.reason(), stored.source(), stored.since(), stored.deadline());
                case 2 -> stored = new DeviceState("c", "n1", DRIVER, "n1", "gpu-0", null, stored.sources(), stored.health(),
                        stored.message(), stored.reason(), stored.source(), 0L, stored.deadline());
                default -> { }
            }
            PendingRefresh pending = switch (random.nextInt(5)) {
                case 0, 1 -> null;
                case 2 -> new PendingRefresh(KEY, refreshedAt + 20_000L + timeoutMs, Map.of(dra.key(), refreshedAt + 20_000L));
                case 3 -> new PendingRefresh(KEY, refreshedAt - 5_000L + timeoutMs, Map.of(dra.key(), refreshedAt - 5_000L));
                default -> new PendingRefresh(KEY, refreshedAt + 20_000L + timeoutMs, Map.of("NVML:nvml", refreshedAt + 20_000L));
            };
            DeviceState current = pending == null ? stored : stored.withRefresh(pending);
            long at = refreshedAt + random.nextInt(60_000) - 15_000L;
            DeviceHealthReport report = report(random.nextInt(6) == 0 ? ReportKind.values()[random.nextInt(3)] : ReportKind.KEEPALIVE,
                    random.nextInt(10) == 0 ? SourceKind.NVML : SourceKind.DRA, random.nextInt(10) == 0 ? "nvml" : DRIVER,
                    random.nextInt(4) == 0 ? healths[random.nextInt(3)] : dra.health(),
                    random.nextInt(4) == 0 ? messages[random.nextInt(2)] : dra.message(), at);
            long reportTimeout = random.nextInt(8) == 0 ? 45_000L : timeoutMs;
            NodeState node = node(Math.max(at, refreshedAt + random.nextInt(90_000)), random.nextInt(8) == 0);

            long fast = KeepAlivePath.refreshedAt(stored, pending, report, at, reportTimeout, node);
            if (pending != null) {
                // The same with what the refresh remembers of the stored state (as after the device's first keep-alive).
                assertThat(KeepAlivePath.refreshedAt(stored, pending.stored(stored), report, at, reportTimeout, node)).isEqualTo(fast);
            }
            if (fast == KeepAlivePath.GENERAL) {
                continue;
            }
            General general = general(current, report, at, reportTimeout, node);
            String what = "case " + i + ": " + stored + " + " + pending + " + " + report + " at node time " + node.nodeTime();
            if (fast == KeepAlivePath.UNCHANGED) {
                unchanged++;
                assertThat(general.unchanged()).as(what).isTrue();
            } else {
                refreshed++;
                assertThat(general.unchanged()).as(what).isFalse();
                assertThat(general.onlyRefreshed()).as(what).isTrue();
                PendingRefresh kept = new PendingRefresh(KEY, SourceReport.staleAt(fast, reportTimeout), stored.onlySource().getKey(), fast);
                assertThat(kept).as(what).isEqualTo(PendingRefresh.of(KEY, general.merged()));
                assertThat(stored.withRefresh(kept)).as(what).isEqualTo(general.merged());
            }
        }
        // Not vacuous: the generated reports reach both of the shortcut's outcomes often.
        assertThat(refreshed).isGreaterThan(10_000);
        assertThat(unchanged).isGreaterThan(2_000);
    }
}
