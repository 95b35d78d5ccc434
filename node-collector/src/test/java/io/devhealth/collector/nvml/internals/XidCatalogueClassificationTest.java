package io.devhealth.collector.nvml.internals;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.collector.nvml.HealthPolicy;
import io.devhealth.collector.nvml.XidCatalog;
import io.devhealth.collector.nvml.jna.NvmlEventType;
import io.devhealth.schema.avro.HealthStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every XID of the shipped catalogue through the real tracker with the shipped policy: the health it
 * gives, whether it is sticky (kept until a reset, across restarts) or expires, and its message.
 *
 * <p>The expectations are written here from what each of NVIDIA's immediate actions asks an operator
 * to do, independently of the policy file: a policy edit that makes, say, RESTART_APP Unhealthy, or
 * lets a RESET_GPU XID expire, fails the XIDs concerned by number.
 */
class XidCatalogueClassificationTest {

    private static final String UUID = "GPU-5a1d0000-0000-4000-8000-000000000000";
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    private static final Duration APPLICATION_HOLD = Duration.ofSeconds(300);
    private static final Duration UNKNOWN_HOLD = Duration.ofSeconds(600);

    /** What one XID should do: health, sticky or for how long, and whether the message carries the catalogue action. */
    record Expectation(HealthStatus health, boolean sticky, Duration hold, boolean namesCatalogueAction) {
        static Expectation healthyFor(Duration hold, boolean namesAction) {
            return new Expectation(HealthStatus.HEALTHY, false, hold, namesAction);
        }

        static Expectation unhealthyUntilReset(boolean namesAction) {
            return new Expectation(HealthStatus.UNHEALTHY, true, null, namesAction);
        }

        static Expectation unhealthyFor(Duration hold, boolean namesAction) {
            return new Expectation(HealthStatus.UNHEALTHY, false, hold, namesAction);
        }
    }

    /** By the catalogue's immediate action. */
    private static final Map<String, Expectation> BY_ACTION = Map.ofEntries(
            // The application failed, the device did not.
            Map.entry("RESTART_APP", Expectation.healthyFor(APPLICATION_HOLD, true)),
            Map.entry("IGNORE", Expectation.healthyFor(APPLICATION_HOLD, true)),
            Map.entry("WORKFLOW_XID_45", Expectation.healthyFor(APPLICATION_HOLD, true)),
            // Informational: the recovery-action reading carries the verdict.
            Map.entry("XID_154", Expectation.healthyFor(APPLICATION_HOLD, true)),
            // Severity is in registers NVML does not deliver; fatal ones change the recovery action.
            Map.entry("WORKFLOW_NVLINK5_ERR", Expectation.healthyFor(APPLICATION_HOLD, true)),
            // A reset, a reboot or a person is needed before the GPU may run work again.
            Map.entry("RESET_GPU", Expectation.unhealthyUntilReset(true)),
            Map.entry("WORKFLOW_XID_48", Expectation.unhealthyUntilReset(true)),
            Map.entry("WORKFLOW_NVLINK_ERR", Expectation.unhealthyUntilReset(true)),
            Map.entry("RESTART_BM", Expectation.unhealthyUntilReset(true)),
            Map.entry("RESTART_VM", Expectation.unhealthyUntilReset(true)),
            Map.entry("CHECK_UVM", Expectation.unhealthyUntilReset(true)),
            Map.entry("CONTACT_SUPPORT", Expectation.unhealthyUntilReset(true)),
            Map.entry("CHECK_MECHANICALS", Expectation.unhealthyUntilReset(true)),
            Map.entry("UPDATE_SWFW", Expectation.unhealthyUntilReset(true)));

    /** The XIDs the catalogue lists without an action: decided one by one from its trigger text. */
    private static final Map<Long, Expectation> WITHOUT_ACTION = Map.ofEntries(
            Map.entry(162L, Expectation.healthyFor(APPLICATION_HOLD, false)),
            Map.entry(163L, Expectation.healthyFor(APPLICATION_HOLD, false)),
            Map.entry(164L, Expectation.healthyFor(APPLICATION_HOLD, false)),
            Map.entry(165L, Expectation.healthyFor(APPLICATION_HOLD, false)),
            Map.entry(166L, Expectation.unhealthyFor(UNKNOWN_HOLD, false)),
            Map.entry(167L, Expectation.unhealthyFor(UNKNOWN_HOLD, false)),
            Map.entry(168L, Expectation.unhealthyUntilReset(false)),
            Map.entry(169L, Expectation.unhealthyUntilReset(false)),
            Map.entry(170L, Expectation.unhealthyFor(UNKNOWN_HOLD, false)),
            Map.entry(171L, Expectation.unhealthyUntilReset(false)),
            Map.entry(172L, Expectation.unhealthyUntilReset(false)));

    static Stream<XidCatalog.Entry> catalogue() {
        return XidCatalog.shipped().entries().values().stream();
    }

    private static Expectation expectation(XidCatalog.Entry entry) {
        return entry.action() == null ? WITHOUT_ACTION.get(entry.xid()) : BY_ACTION.get(entry.action());
    }

    @Test
    void shouldHaveAnExpectationForEveryActionAndEveryXidWithoutOne() {
        assertThat(BY_ACTION.keySet()).containsExactlyInAnyOrderElementsOf(XidCatalog.shipped().actions());
        assertThat(WITHOUT_ACTION.keySet()).containsExactlyInAnyOrderElementsOf(
                catalogue().filter(e -> e.action() == null).map(XidCatalog.Entry::xid).toList());
    }

    @ParameterizedTest(name = "XID {0}")
    @MethodSource("catalogue")
    void shouldClassifyEveryCatalogueXidByItsImmediateAction(XidCatalog.Entry entry) {
        Expectation expected = expectation(entry);
        assertThat(expected).as("expectation for XID %d (%s)", entry.xid(), entry.action()).isNotNull();
        HealthTracker tracker = trackerWithOneGpu();

        occurs(tracker, entry.xid(), T0);

        HealthTracker.DeviceView view = tracker.views().get(0);
        assertThat(view.health()).as("health of XID %d (%s)", entry.xid(), entry.action()).isEqualTo(expected.health());
        assertThat(view.reason()).isEqualTo("XID-" + entry.xid());
        assertThat(view.message()).startsWith("XID " + entry.xid() + ": ");
        if (expected.namesCatalogueAction()) {
            assertThat(view.message()).isEqualTo("XID " + entry.xid() + ": " + entry.name() + " [" + entry.action() + ": "
                    + HealthPolicy.defaults().xidActions().get(entry.action()).description() + "]");
        } else {
            assertThat(view.message()).as("a message that says the catalogue gives no action")
                    .contains("no action in NVIDIA's XID catalogue");
        }
        assertThat(tracker.stickyRecords(T0)).as("kept across restarts: XID %d", entry.xid()).hasSize(expected.sticky() ? 1 : 0);

        if (expected.sticky()) {
            tracker.expire(T0.plus(Duration.ofDays(30)));
            assertThat(tracker.views().get(0).health()).as("still %s a month later", expected.health()).isEqualTo(expected.health());
        } else {
            tracker.expire(T0.plus(expected.hold()).minusSeconds(1));
            assertThat(tracker.views().get(0).reason()).as("held for %s", expected.hold()).isEqualTo("XID-" + entry.xid());
            tracker.expire(T0.plus(expected.hold()));
            assertThat(tracker.views().get(0).health()).isEqualTo(HealthStatus.HEALTHY);
            assertThat(tracker.views().get(0).message()).as("expired after %s", expected.hold()).isNull();
        }
    }

    @Test
    void shouldRecoverEveryStickyXidWhenAResetIsSeen() {
        List<XidCatalog.Entry> sticky = catalogue().filter(e -> expectation(e).sticky()).toList();
        assertThat(sticky).hasSizeGreaterThan(60);
        for (XidCatalog.Entry entry : sticky) {
            HealthTracker tracker = trackerWithOneGpu();
            tracker.polled(UUID, readings(3L), T0);
            occurs(tracker, entry.xid(), T0.plusSeconds(1));
            assertThat(tracker.views().get(0).health()).isEqualTo(HealthStatus.UNHEALTHY);
            // The volatile ECC counter restarting is reset evidence.
            tracker.polled(UUID, readings(0L), T0.plusSeconds(2));
            HealthTracker.DeviceView view = tracker.views().get(0);
            assertThat(view.health()).as("XID %d after a reset", entry.xid()).isEqualTo(HealthStatus.HEALTHY);
            assertThat(view.message()).startsWith("GPU reset detected");
        }
    }

    @Test
    void shouldGiveAnXidNewerThanTheCatalogueTheConservativeDefault() {
        long newer = XidCatalog.shipped().highest() + 13;
        HealthTracker tracker = trackerWithOneGpu();

        occurs(tracker, newer, T0);

        HealthTracker.DeviceView view = tracker.views().get(0);
        assertThat(view.health()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(view.message()).isEqualTo("XID " + newer + ": not in the XID catalogue this collector ships");
        assertThat(tracker.stickyRecords(T0)).isEmpty();
        tracker.expire(T0.plus(UNKNOWN_HOLD));
        assertThat(tracker.views().get(0).health()).isEqualTo(HealthStatus.HEALTHY);
    }

    private static HealthTracker trackerWithOneGpu() {
        HealthTracker tracker = new HealthTracker(HealthPolicy.defaults());
        tracker.enumerated(List.of(new GpuDevice(null, 0, UUID, "NVIDIA Stub", "00000000:18:00.0", false, List.of())), Map.of(), T0);
        return tracker;
    }

    private static void occurs(HealthTracker tracker, long xid, Instant at) {
        EventCoalescer coalescer = new EventCoalescer();
        coalescer.record(new EventCoalescer.EventKey(DeviceKey.gpu(UUID), NvmlEventType.XID_CRITICAL_ERROR, xid), at);
        tracker.applyEvents(coalescer.drain());
    }

    private static Readings readings(Long volatileUncorrectedEcc) {
        return new Readings(45, 90, null, null, volatileUncorrectedEcc, Map.of(), null, null, null, null, null, List.of());
    }
}
