package io.devhealth.processor.internals;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SilenceClockTest {

    private final SilenceClock clock = new SilenceClock(10_000, 5_000);

    @Test
    void shouldExtrapolateTheNodesTimeFromItsLastRecord() {
        clock.start(0);
        clock.recordSeen("n", 20_000);

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
    void shouldTreatALongGapBetweenTicksAsAStall() {
        clock.start(0);
        for (long wall = 1_000; wall <= 21_000; wall += 1_000) {
            assertThat(clock.tick(wall)).isTrue();
        }
        clock.recordSeen("n", 20_000);

        assertThat(clock.tick(80_000)).as("59 s without a tick").isFalse();
        assertThat(clock.nodeNow("n", 0, 85_000)).as("within the grace").isZero();
        for (long wall = 81_000; wall <= 91_000; wall += 1_000) {
            assertThat(clock.tick(wall)).isTrue();
        }
        assertThat(clock.nodeNow("n", 0, 95_000)).isEqualTo(5_000);
    }
}
