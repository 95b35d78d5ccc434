package io.devhealth.processor.internals.node;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SilenceClockTest {

    private final SilenceClock clock = new SilenceClock(10_000, 5_000);

    @Test
    void shouldExtrapolateTheNodesTimeFromItsLastRecord() {
        clock.start(0);
        clock.recordSeen("n", 20_000, 20_000);

        assertThat(clock.nodeNow("n", 1_000_000, 20_000)).isEqualTo(1_000_000);
        assertThat(clock.nodeNow("n", 1_000_000, 27_000)).isEqualTo(1_007_000);
    }

    @Test
    void shouldCountNothingBeforeStartPlusGrace() {
        clock.start(100_000);

        assertThat(clock.nodeNow("never-seen", 5_000, 109_000)).isEqualTo(5_000);
        assertThat(clock.nodeNow("never-seen", 5_000, 115_000)).isEqualTo(10_000);
    }

    @Test
    void shouldCountANodeNotSeenSinceTheStartOnlyOnceTheInputCoversStartPlusGrace() {
        clock.start(0);
        // A backlog: the first record read after the start was sent 30 s before it.
        clock.recordSeen("busy", 1_000, -29_000);

        assertThat(clock.nodeNow("never-seen", 5_000, 40_000)).as("input covers up to 10 s, the grace's end").isEqualTo(5_000);
        assertThat(clock.nodeNow("never-seen", 5_000, 45_000)).isEqualTo(10_000);
    }

    @Test
    void shouldTreatALongGapBetweenTicksAsAStall() {
        clock.start(0);
        for (long wall = 1_000; wall <= 21_000; wall += 1_000) {
            assertThat(clock.tick(wall)).isTrue();
        }
        clock.recordSeen("n", 20_000, 20_000);

        assertThat(clock.tick(80_000)).as("59 s without a tick").isFalse();
        assertThat(clock.nodeNow("n", 0, 85_000)).as("within the grace").isZero();
        for (long wall = 81_000; wall <= 91_000; wall += 1_000) {
            assertThat(clock.tick(wall)).isTrue();
        }
        assertThat(clock.nodeNow("n", 0, 95_000)).isEqualTo(5_000);
    }

    @Test
    void shouldNotCountTheTimeItsInputHasNotCoveredYet() {
        clock.start(0);
        clock.recordSeen("quiet", 20_000, 20_000);
        // 40 s later the processor is working off a backlog: what it reads now was sent 35 s ago.
        clock.recordSeen("busy", 60_000, 25_000);

        assertThat(clock.behindMs()).isEqualTo(35_000);
        assertThat(clock.nodeNow("quiet", 1_000_000, 60_000)).as("the input covers 5 s since its record").isEqualTo(1_005_000);
        assertThat(clock.nodeNow("quiet", 1_000_000, 70_000)).as("then wall pace, 35 s later").isEqualTo(1_015_000);
    }

    @Test
    void shouldCountFasterWhileCatchingUpAndAtWallPaceOnceCaughtUp() {
        clock.start(-100_000);
        clock.recordSeen("quiet", 20_000, 0);
        assertThat(clock.nodeNow("quiet", 0, 30_000)).as("20 s behind, steadily: wall pace").isEqualTo(10_000);

        clock.recordSeen("busy", 40_000, 35_000);
        assertThat(clock.nodeNow("quiet", 0, 40_000)).as("caught up to 5 s behind").isEqualTo(35_000);

        clock.recordSeen("busy", 41_000, 41_000);
        assertThat(clock.nodeNow("quiet", 0, 50_000)).as("caught up: wall time since the input covered its record").isEqualTo(50_000);
    }

    @Test
    void shouldCancelASteadyClockOffsetAndIgnoreAClockAhead() {
        clock.start(0);
        // The nodes' clocks run 7 s behind the processor's.
        clock.recordSeen("n", 20_000, 13_000);
        clock.recordSeen("m", 25_000, 18_000);
        assertThat(clock.nodeNow("n", 1_000, 30_000)).isEqualTo(11_000);

        // A node clock ahead: no distance, the plain wall-clock wait.
        clock.recordSeen("ahead", 30_000, 90_000);
        assertThat(clock.behindMs()).isZero();
        assertThat(clock.nodeNow("ahead", 1_000, 32_000)).isEqualTo(3_000);
    }
}
