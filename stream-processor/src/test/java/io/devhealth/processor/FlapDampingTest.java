package io.devhealth.processor;

import static io.devhealth.processor.TopologyFixture.T0;
import static io.devhealth.processor.TopologyFixture.report;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.processor.internals.rules.FlapLimits;
import io.devhealth.schema.avro.DeviceStatus;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.SourceStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Flap damping: a source that changes a device's health more than the threshold within the window
 * holds the device (reason Flapping) until it has been quiet; one transition when the hold starts, one
 * when it ends. The quiet period is lived on the driver's wall clock, as the expiry punctuator lives it.
 */
class FlapDampingTest {

    /** More than 3 changes within a minute is flapping; the hold ends after 30 s without one. Reports stay fresh for 10 minutes. */
    private static final FlapLimits LIMITS = new FlapLimits(3, Duration.ofMinutes(1), Duration.ofSeconds(30));
    private static final TimeoutPolicy LONG_FRESH = new TimeoutPolicy(Duration.ofMinutes(10), Map.of());

    private TopologyFixture fixture = new TopologyFixture(o -> o.timeouts(LONG_FRESH).flapDamping(new FlapPolicy(LIMITS, Map.of())));

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    private static String describe(HealthTransition t) {
        return t.getFrom() + "->" + t.getTo() + (t.getReason() == null ? "" : " " + t.getReason());
    }

    /** The device's health flips at every report: Healthy, Unhealthy, Healthy… {@code count} reports 100 ms apart from {@code start}. */
    private Instant flap(String device, int count, Instant start) {
        Instant at = start;
        for (int i = 0; i < count; i++) {
            at = start.plusMillis(100L * i);
            fixture.send(report(device, i % 2 == 0 ? HealthStatus.HEALTHY : HealthStatus.UNHEALTHY, at).setReason(i % 2 == 0 ? null : "XID-79"));
        }
        return at;
    }

    /** The wall clock runs on, with the node's heartbeat every 5 s (the node's clock). */
    private void quietFor(Duration duration) {
        for (long s = 0; s < duration.toSeconds(); s++) {
            fixture.runFor(Duration.ofSeconds(1));
            if (s % 5 == 0) {
                fixture.heartbeat(fixture.wall(), SourceStatus.UP);
            }
        }
    }

    @Test
    void shouldHoldAFlappingDeviceWithOneTransitionWhenTheHoldStartsAndNoneForTheFlipsAfterIt() {
        fixture.allocate("train-0", "gpu-0");

        flap("gpu-0", 40, T0);

        List<HealthTransition> transitions = fixture.transitions.readValuesToList();
        assertThat(transitions).extracting(FlapDampingTest::describe).containsExactly(
                "UNKNOWN->HEALTHY", "HEALTHY->UNHEALTHY XID-79", "UNHEALTHY->HEALTHY", "HEALTHY->UNHEALTHY XID-79",
                "UNHEALTHY->UNHEALTHY Flapping");
        assertThat(transitions.get(4).getMessage()).contains("flapping", "more than 3 times within 60 s", "held Unhealthy", "30 s");
        List<PodDeviceStatus> statuses = fixture.podStatus.readValuesToList();
        DeviceStatus shown = statuses.get(statuses.size() - 1).getContainers().get(0).getClaims().get(0).getDevices().get(0);
        assertThat(shown.getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(shown.getReason()).as("the pod's record says it is damped").isEqualTo("Flapping");
        assertThat(statuses).as("the allocation's, then one per transition: none for the held flips").hasSize(6);
    }

    @Test
    void shouldEndTheHoldAfterTheQuietPeriodWithOneTransitionToTheSourcesLatestWord() {
        fixture.heartbeat(T0, SourceStatus.UP);
        Instant last = flap("gpu-0", 41, T0); // the 41st report says Healthy
        fixture.transitions.readValuesToList();

        quietFor(Duration.ofSeconds(25));
        assertThat(fixture.transitions.isEmpty()).as("held while the source was quiet for less than 30 s").isTrue();
        quietFor(Duration.ofSeconds(10));

        assertThat(fixture.transitions.readValuesToList()).singleElement().satisfies(t -> {
            assertThat(describe(t)).isEqualTo("UNHEALTHY->HEALTHY");
            assertThat(t.getAt()).as("30 s after the last change").isEqualTo(last.plusSeconds(30));
            // 40 changes; the hold started at the 4th, so it held the 4th to the 40th.
            assertThat(t.getMessage()).as("the end of the hold says how much it held back")
                    .contains("flap damping ended: 37 changes of health held since " + T0.plusMillis(400));
        });
    }

    @Test
    void shouldNotTakeASourcesOwnReasonOfThatNameForAHold() {
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0).setReason("Flapping"));
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));

        assertThat(fixture.transitions.readValuesToList()).as("the reason changed, the health did not, and nothing was held")
                .extracting(FlapDampingTest::describe).containsExactly("UNKNOWN->HEALTHY Flapping");
    }

    @Test
    void shouldExtendTheHoldWithEveryChangeAndHoldTheWorseWord() {
        fixture.heartbeat(T0, SourceStatus.UP);
        flap("gpu-0", 10, T0);
        fixture.transitions.readValuesToList();

        quietFor(Duration.ofSeconds(20));
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, fixture.wall()));
        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, fixture.wall().plusMillis(10)).setReason("XID-79"));
        quietFor(Duration.ofSeconds(20));

        assertThat(fixture.transitions.isEmpty()).as("20 s after the last change: still held").isTrue();
        quietFor(Duration.ofSeconds(15));
        assertThat(fixture.transitions.readValuesToList()).extracting(FlapDampingTest::describe).containsExactly("UNHEALTHY->UNHEALTHY XID-79");
    }

    @Test
    void shouldCountEachSourcesChangesApart() {
        fixture.inventory("gpu-0");
        // Two sources, two changes each, interleaved: the device's health changes four times, no source's more than three.
        Instant at = T0;
        for (int i = 0; i < 4; i++) {
            at = at.plusMillis(100);
            HealthStatus health = i % 2 == 0 ? HealthStatus.UNHEALTHY : HealthStatus.HEALTHY;
            fixture.send(report("gpu-0", i < 2 ? health : HealthStatus.HEALTHY, at));
            fixture.send(TopologyFixture.nvml(TopologyFixture.uuid("gpu-0"), i < 2 ? HealthStatus.HEALTHY : health, at.plusMillis(50)));
        }

        assertThat(fixture.transitions.readValuesToList()).extracting(HealthTransition::getReason).doesNotContain("Flapping");
    }

    @Test
    void shouldShowTheHeldWordOfAFlappingSourceOnADeviceWithTwoSources() {
        fixture.inventory("gpu-0");
        fixture.allocate("train-0", "gpu-0");
        fixture.send(TopologyFixture.nvml(TopologyFixture.uuid("gpu-0"), HealthStatus.HEALTHY, T0));
        // The driver flaps and its last word is Healthy: NVML's steady Healthy must not outvote the driver's hold.
        flap("gpu-0", 41, T0.plusSeconds(1));

        List<HealthTransition> transitions = fixture.transitions.readValuesToList();
        assertThat(transitions).extracting(FlapDampingTest::describe).as("none for the flips after the hold started").containsExactly(
                "UNKNOWN->HEALTHY", "HEALTHY->UNHEALTHY XID-79", "UNHEALTHY->HEALTHY", "HEALTHY->UNHEALTHY XID-79",
                "UNHEALTHY->UNHEALTHY Flapping");
        List<PodDeviceStatus> statuses = fixture.podStatus.readValuesToList();
        DeviceStatus shown = statuses.get(statuses.size() - 1).getContainers().get(0).getClaims().get(0).getDevices().get(0);
        assertThat(shown.getHealth()).as("the merged device shows the held word").isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(shown.getReason()).isEqualTo("Flapping");
        assertThat(shown.getMessage()).startsWith("flapping: " + TopologyFixture.DRIVER + " (DRA) changed health more than 3 times");
    }

    @Test
    void shouldNotCountChangesThatFellOutOfTheWindow() {
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0));
        // Four changes 20 s apart: the first is a whole window (60 s) before the fourth, so only three count.
        for (int i = 1; i <= 4; i++) {
            fixture.send(report("gpu-0", i % 2 == 1 ? HealthStatus.UNHEALTHY : HealthStatus.HEALTHY, T0.plusSeconds(10 + 20L * (i - 1))));
        }
        assertThat(fixture.transitions.readValuesToList()).extracting(FlapDampingTest::describe).containsExactly(
                "UNKNOWN->HEALTHY", "HEALTHY->UNHEALTHY", "UNHEALTHY->HEALTHY", "HEALTHY->UNHEALTHY", "UNHEALTHY->HEALTHY");

        // A fifth 10 s later makes four within a minute (30 s, 50 s, 70 s, 80 s): that is flapping.
        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(80)));
        assertThat(fixture.transitions.readValuesToList()).extracting(FlapDampingTest::describe)
                .containsExactly("HEALTHY->UNHEALTHY Flapping");
    }

    @Test
    void shouldTakeASourcesOwnLimitsAndNotDampWhereTheyTurnItOff() {
        fixture.close();
        fixture = new TopologyFixture(o -> o.timeouts(LONG_FRESH)
                .flapDamping(new FlapPolicy(LIMITS, Map.of(TopologyFixture.DRIVER, FlapLimits.OFF))));

        flap("gpu-0", 20, T0);

        assertThat(fixture.transitions.readValuesToList()).as("every change a transition").hasSize(20);
    }

    /**
     * A storm: 100 GPUs flipping 10 times a second each for 20 s, then quiet. Each sends its first
     * changes as transitions until it counts as flapping, then one transition when the hold starts and
     * one when it ends: 4 + 2 for 200 flips.
     */
    @Test
    void shouldTurnAFlapStormIntoAtMostTwoTransitionsPerDevicePerHold() {
        fixture.close();
        fixture = new TopologyFixture(o -> o.timeouts(LONG_FRESH).flapDamping(new FlapPolicy(LIMITS, Map.of())));
        fixture.heartbeat(T0, SourceStatus.UP);
        for (int tick = 0; tick < 200; tick++) {
            Instant at = T0.plusMillis(100L * tick);
            for (int d = 0; d < 100; d++) {
                fixture.send(report("gpu-" + d, (tick + d) % 2 == 0 ? HealthStatus.HEALTHY : HealthStatus.UNHEALTHY, at));
            }
        }
        quietFor(Duration.ofSeconds(60));

        Map<String, Integer> perDevice = new HashMap<>();
        Map<String, Integer> afterHold = new HashMap<>();
        for (HealthTransition t : fixture.transitions.readValuesToList()) {
            String device = t.getDevice().getDevice();
            perDevice.merge(device, 1, Integer::sum);
            if (afterHold.containsKey(device) || "Flapping".equals(t.getReason())) {
                afterHold.merge(device, 1, Integer::sum);
            }
        }
        assertThat(perDevice).hasSize(100);
        assertThat(afterHold.values()).as("the hold's start and its end").containsOnly(2);
        assertThat(perDevice.values()).as("the first change, three more, the hold's start and its end").containsOnly(6);
    }
}
