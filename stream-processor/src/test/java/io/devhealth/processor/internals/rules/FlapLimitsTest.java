package io.devhealth.processor.internals.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** What damping settings are accepted: a threshold of 0 turns damping off, a negative one or an empty window is refused. */
class FlapLimitsTest {

    private static final Duration ONE_MS = Duration.ofMillis(1);

    @Test
    void shouldTakeZeroFlipsForOffAndTheSmallestWindowAndQuietPeriod() {
        assertThat(new FlapLimits(0, ONE_MS, ONE_MS).enabled()).isFalse();
        assertThat(new FlapLimits(1, ONE_MS, ONE_MS).enabled()).isTrue();
    }

    @Test
    void shouldRefuseANegativeThreshold() {
        assertThatThrownBy(() -> new FlapLimits(-1, ONE_MS, ONE_MS)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must not be negative: -1");
    }

    @Test
    void shouldRefuseAWindowOrQuietPeriodUnderAMillisecond() {
        assertThatThrownBy(() -> new FlapLimits(5, Duration.ZERO, ONE_MS)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be positive");
        assertThatThrownBy(() -> new FlapLimits(5, ONE_MS, Duration.ofNanos(999_999))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be positive");
    }
}
