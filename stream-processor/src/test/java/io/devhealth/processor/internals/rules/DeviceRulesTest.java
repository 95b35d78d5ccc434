package io.devhealth.processor.internals.rules;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.avro.SourceStatus;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class DeviceRulesTest {

    private static final String DRIVER = "gpu.nvidia.com";
    private static final String KEY = "n1/gpu.nvidia.com/n1/gpu-0";
    private static final long T0 = 1_764_410_400_000L;
    private static final long TIMEOUT = 30_000L;
    /** Damping that the generated histories reach: more than 2 changes within a minute, held for 30 s. */
    private static final FlapLimits LIMITS = new FlapLimits(2, java.time.Duration.ofMinutes(1), java.time.Duration.ofSeconds(30));
    private static final DeviceRef REF = DeviceRef.newBuilder().setDriver(DRIVER).setPool("n1").setDevice("gpu-0").build();

    private static DeviceHealthReport report(ReportKind kind, SourceKind source, String name, HealthStatus health, String message,
                                             long observedAt) {
        return DeviceHealthReport.newBuilder().setNode("n1").setSource(source).setSourceName(name).setDevice(REF).setHealth(health)
                .setKind(kind).setMessage(message).setReason(message == null ? null : "XID-79")
                .setObservedAt(Instant.ofEpochMilli(observedAt)).build();
    }

    private static DeviceHealthReport dra(ReportKind kind, HealthStatus health, long observedAt) {
        return report(kind, SourceKind.DRA, DRIVER, health, health == HealthStatus.UNHEALTHY ? "XID 79" : null, observedAt);
    }

    private static NodeState node(long nodeTime, boolean driverDown) {
        return NodeState.empty("c").withReport(NodeState.Watermark.NONE, nodeTime)
                .withSources(Map.of(DRIVER, new NodeState.Liveness(driverDown ? SourceStatus.DOWN : SourceStatus.UP, T0, null)));
    }

    private static DeviceState empty() {
        return DeviceState.empty("c", "n1", REF);
    }

    /** Applies {@code report} at the report's own time as the node's clock. */
    private static DeviceRules.Outcome apply(DeviceState device, DeviceHealthReport report) {
        long at = report.getObservedAt().toEpochMilli();
        return DeviceRules.apply(device, report, at, TIMEOUT, node(at, false), LIMITS);
    }

    private static DeviceState next(DeviceRules.Outcome outcome) {
        if (outcome instanceof DeviceRules.Changed changed) {
            return changed.next();
        }
        if (outcome instanceof DeviceRules.Refreshed refreshed) {
            return refreshed.next();
        }
        throw new AssertionError("unchanged: " + outcome);
    }

    @Test
    void shouldOnlyRefreshOnAKeepAliveThatRepeatsTheSourcesWord() {
        DeviceState healthy = next(apply(empty(), dra(ReportKind.CHANGE, HealthStatus.HEALTHY, T0)));

        DeviceRules.Outcome keepAlive = apply(healthy, dra(ReportKind.KEEPALIVE, HealthStatus.HEALTHY, T0 + 15_000));

        assertThat(keepAlive).isInstanceOf(DeviceRules.Refreshed.class);
        DeviceState refreshed = next(keepAlive);
        assertThat(refreshed.deadline()).isEqualTo(T0 + 15_000 + TIMEOUT);
        assertThat(refreshed.since()).isEqualTo(healthy.since());
        assertThat(refreshed.sources().get("DRA:" + DRIVER).observedAt()).as("when the source said it").isEqualTo(T0);
    }

    @Test
    void shouldNotPullTheRefreshTimeBackWhenAChangeIsReplayedAfterKeepAlives() {
        DeviceHealthReport change = dra(ReportKind.CHANGE, HealthStatus.HEALTHY, T0);
        DeviceState healthy = next(apply(empty(), change));
        DeviceState kept = next(apply(healthy, dra(ReportKind.KEEPALIVE, HealthStatus.HEALTHY, T0 + 15_000)));

        // The same change again (a spool replayed under a new sequence): the keep-alive after it is newer evidence.
        DeviceRules.Outcome replayed = DeviceRules.apply(kept, change, T0, TIMEOUT, node(T0 + 16_000, false), LIMITS);

        assertThat(replayed).isInstanceOf(DeviceRules.Unchanged.class);
        assertThat(kept.deadline()).as("no early Unknown").isEqualTo(T0 + 15_000 + TIMEOUT);
    }

    @Test
    void shouldIgnoreAChangeOlderThanTheSourcesLatestKeepAlive() {
        DeviceState healthy = next(apply(empty(), dra(ReportKind.CHANGE, HealthStatus.HEALTHY, T0)));
        DeviceState kept = next(apply(healthy, dra(ReportKind.KEEPALIVE, HealthStatus.HEALTHY, T0 + 15_000)));

        DeviceRules.Outcome late = DeviceRules.apply(kept, dra(ReportKind.CHANGE, HealthStatus.UNHEALTHY, T0 + 10_000), T0 + 10_000,
                TIMEOUT, node(T0 + 15_000, false), LIMITS);

        assertThat(late).isInstanceOf(DeviceRules.Unchanged.class);
    }

    @Test
    void shouldNotRefreshFromASourceTheNodeSaysIsDown() {
        DeviceState healthy = next(apply(empty(), dra(ReportKind.CHANGE, HealthStatus.HEALTHY, T0)));

        DeviceRules.Outcome keepAlive = DeviceRules.apply(healthy, dra(ReportKind.KEEPALIVE, HealthStatus.HEALTHY, T0 + 15_000),
                T0 + 15_000, TIMEOUT, node(T0 + 15_000, true), LIMITS);

        assertThat(keepAlive).isInstanceOf(DeviceRules.Unchanged.class);
    }

    @Test
    void shouldChangeWhenAKeepAliveRevivesADeviceThatWentUnknown() {
        DeviceState healthy = next(apply(empty(), dra(ReportKind.CHANGE, HealthStatus.HEALTHY, T0)));
        List<DeviceRules.Expiry> expired = DeviceRules.expire(healthy, T0 + 40_000);
        assertThat(expired).singleElement().satisfies(e -> {
            assertThat(e.at()).isEqualTo(T0 + TIMEOUT);
            assertThat(e.next().health()).isEqualTo(HealthStatus.UNKNOWN);
        });

        DeviceRules.Outcome keepAlive = apply(expired.get(0).next(), dra(ReportKind.KEEPALIVE, HealthStatus.HEALTHY, T0 + 45_000));

        assertThat(keepAlive).isInstanceOf(DeviceRules.Changed.class);
        assertThat(next(keepAlive).health()).isEqualTo(HealthStatus.HEALTHY);
    }

    @Test
    void shouldStayUnhealthyWhenAnotherSourceReportsANewerHealthyChange() {
        DeviceState unhealthy = next(apply(empty(), report(ReportKind.CHANGE, SourceKind.NVML, "nvml", HealthStatus.UNHEALTHY,
                "XID 79", T0)));

        DeviceState both = next(apply(unhealthy, dra(ReportKind.CHANGE, HealthStatus.HEALTHY, T0 + 1_000)));

        assertThat(both.health()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(both.source()).isEqualTo(SourceKind.NVML);
        assertThat(both.since()).isEqualTo(T0);
    }

    @Test
    void shouldExpireEachSourceAtItsOwnDeadlineInOrder() {
        DeviceState unhealthy = next(apply(empty(), report(ReportKind.CHANGE, SourceKind.NVML, "nvml", HealthStatus.UNHEALTHY,
                "XID 79", T0)));
        DeviceState both = DeviceRules.apply(unhealthy, dra(ReportKind.CHANGE, HealthStatus.HEALTHY, T0 + 10_000), T0 + 10_000,
                2 * TIMEOUT, node(T0 + 10_000, false), LIMITS) instanceof DeviceRules.Changed c ? c.next() : null;

        List<DeviceRules.Expiry> steps = DeviceRules.expire(both, T0 + 100_000);

        assertThat(steps).extracting(DeviceRules.Expiry::at).containsExactly(T0 + TIMEOUT, T0 + 10_000 + 2 * TIMEOUT);
        assertThat(steps).extracting(step -> step.next().health()).containsExactly(HealthStatus.HEALTHY, HealthStatus.UNKNOWN);
    }

    @Test
    void shouldMoveSourcesKnownByUuidOntoTheDraDevice() {
        DeviceRef uuidOnly = DeviceRef.newBuilder().setDriver("").setPool("").setDevice("").setUuid("GPU-0").build();
        DeviceState orphan = next(DeviceRules.apply(DeviceState.empty("c", "n1", uuidOnly), report(ReportKind.CHANGE, SourceKind.NVML,
                "nvml", HealthStatus.UNHEALTHY, "XID 79", T0), T0, TIMEOUT, node(T0, false), LIMITS));
        DeviceState dra = next(apply(empty(), dra(ReportKind.CHANGE, HealthStatus.HEALTHY, T0 + 1_000)));

        DeviceState mapped = DeviceRules.remap(dra, orphan, T0 + 2_000);

        assertThat(mapped.sources()).containsKeys("DRA:" + DRIVER, "NVML:nvml");
        assertThat(mapped.health()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(mapped.device()).isEqualTo("gpu-0");
    }

    /**
     * The keep-alive decision taken without merging ({@link SourceReport#onlyRefreshedBy},
     * {@link DeviceHealthMerger#keepsWordOfOnlySource}) against the general path it saves: on generated
     * states — some with a second source, a health or {@code since} they would not have from their
     * source alone — and reports, both must give the same outcome.
     */
    @Test
    void shouldDecideEveryKeepAliveAsTheGeneralPathDoes() {
        Random random = new Random(20261201L);
        HealthStatus[] healths = HealthStatus.values();
        String[] messages = {null, "XID 79: GPU has fallen off the bus"};
        int decidedWithoutMerging = 0;
        for (int i = 0; i < 200_000; i++) {
            long timeout = random.nextBoolean() ? TIMEOUT : 2 * TIMEOUT;
            long observed = T0 + random.nextInt(10_000);
            long refreshedAt = observed + random.nextInt(3) * 10_000L;
            Flaps flaps = switch (random.nextInt(10)) {
                case 0 -> new Flaps.Counting(List.of(observed - random.nextInt(90_000)));
                case 1 -> new Flaps.Held(observed, healths[random.nextInt(3)], "flapping", 3, observed + random.nextInt(60_000));
                default -> null;
            };
            SourceReport source = new SourceReport(SourceKind.DRA, DRIVER, healths[random.nextInt(3)], messages[random.nextInt(2)],
                    "XID-79", observed, refreshedAt, timeout, flaps);
            DeviceState device = empty().withSourceMerged(source, refreshedAt + random.nextInt(80_000), observed);
            switch (random.nextInt(12)) {
                case 0 -> device = device.withSourceMerged(new SourceReport(SourceKind.NVML, "nvml", healths[random.nextInt(3)], null,
                        null, observed, observed, timeout), refreshedAt, observed);
                case 1 -> device = new DeviceState("c", "n1", DRIVER, "n1", "gpu-0", null, device.sources(), healths[random.nextInt(3)],
                        device.message(), device.reason(), device.source(), device.since(), device.deadline());
                case 2 -> device = new DeviceState("c", "n1", DRIVER, "n1", "gpu-0", null, device.sources(), device.health(),
                        device.message(), device.reason(), device.source(), 0L, device.deadline());
                default -> { }
            }
            long at = refreshedAt + random.nextInt(60_000) - 15_000L;
            DeviceHealthReport report = report(random.nextInt(6) == 0 ? ReportKind.values()[random.nextInt(3)] : ReportKind.KEEPALIVE,
                    random.nextInt(10) == 0 ? SourceKind.NVML : SourceKind.DRA, random.nextInt(10) == 0 ? "nvml" : DRIVER,
                    random.nextInt(4) == 0 ? healths[random.nextInt(3)] : source.health(),
                    random.nextInt(4) == 0 ? messages[random.nextInt(2)] : source.message(), at);
            long reportTimeout = random.nextInt(8) == 0 ? 3 * TIMEOUT : timeout;
            NodeState node = node(Math.max(at, refreshedAt + random.nextInt(90_000)), random.nextInt(8) == 0);

            SourceReport known = device.source(report.getSource(), report.getSourceName());
            DeviceRules.Outcome general = known != null && !known.supersededBy(at) ? new DeviceRules.Unchanged()
                    : DeviceRules.general(device, report, known, at, reportTimeout, node, node.isDown(report.getSourceName()), LIMITS);
            assertThat(DeviceRules.apply(device, report, at, reportTimeout, node, LIMITS)).as("case %d: %s + %s at %d", i, device, report,
                    node.nodeTime()).isEqualTo(general);
            if (known != null && known.supersededBy(at) && known.onlyRefreshedBy(report, reportTimeout, node.isDown(report.getSourceName()))
                    && DeviceHealthMerger.keepsWordOfOnlySource(device, known, Math.max(known.refreshedAt(), at), node.nodeTime())) {
                decidedWithoutMerging++;
                assertThat(SourceReport.after(report, known, at, reportTimeout, false, LIMITS))
                        .isEqualTo(known.withRefreshedAt(Math.max(known.refreshedAt(), at)));
            }
        }
        // Not vacuous: the shortcut decides often.
        assertThat(decidedWithoutMerging).isGreaterThan(8_000);
    }

    /**
     * A refresh is kept as {@link PendingRefresh} beside the state last written: for every report the
     * rules call a refresh, the written state with the refresh applied must be exactly the new state,
     * however many refreshes came since the write — or a restart or a query would read another device.
     */
    @Test
    void shouldLoseNothingWhenARefreshIsKeptApartFromTheWrittenState() {
        Random random = new Random(20261201L);
        HealthStatus[] healths = HealthStatus.values();
        SourceKind[] kinds = {SourceKind.DRA, SourceKind.NVML};
        String[] names = {DRIVER, "nvml"};
        int refreshed = 0;
        int changed = 0;
        for (int device = 0; device < 2_000; device++) {
            DeviceState written = empty();
            DeviceState current = written;
            long time = T0;
            for (int step = 0; step < 40; step++) {
                time += random.nextInt(20_000);
                int source = random.nextInt(5) == 0 ? 1 : 0;
                SourceReport known = current.source(kinds[source], names[source]);
                boolean repeat = known != null && random.nextInt(4) != 0;
                HealthStatus health = repeat ? known.health() : healths[random.nextInt(3)];
                String message = repeat ? known.message() : health == HealthStatus.UNHEALTHY ? "XID 79" : null;
                ReportKind kind = random.nextInt(5) == 0 ? ReportKind.CHANGE : ReportKind.KEEPALIVE;
                long observedAt = time - random.nextInt(3_000);
                long timeout = random.nextInt(6) == 0 ? 2 * TIMEOUT : TIMEOUT;
                NodeState node = node(time, random.nextInt(10) == 0);
                for (DeviceRules.Expiry expiry : DeviceRules.expire(current, time)) {
                    current = expiry.next();
                    written = current;
                }
                DeviceRules.Outcome outcome = DeviceRules.apply(current, report(kind, kinds[source], names[source], health, message,
                        observedAt), observedAt, timeout, node, LIMITS);
                if (outcome instanceof DeviceRules.Refreshed r) {
                    refreshed++;
                    assertThat(r.next()).as("a refresh changes something").isNotEqualTo(current);
                    assertThat(written.withRefresh(PendingRefresh.of(KEY, r.next()))).as("device %d step %d", device, step)
                            .isEqualTo(r.next());
                    current = r.next();
                } else if (outcome instanceof DeviceRules.Changed c) {
                    changed++;
                    current = c.next();
                    written = current;
                }
            }
        }
        // Not vacuous: both outcomes are common.
        assertThat(refreshed).isGreaterThan(10_000);
        assertThat(changed).isGreaterThan(5_000);
    }
}
