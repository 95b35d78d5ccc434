package io.devhealth.collector.dra;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential backoff with "equal jitter": a restarting driver on 10k nodes must not be hit by
 * 10k collectors in lock-step.
 */
public final class Backoff {

    private final Duration initial;
    private final Duration max;
    private int attempt;

    public Backoff(Duration initial, Duration max) {
        this.initial = initial;
        this.max = max;
    }

    /** The delay before the next attempt; grows with every call until {@link #reset()}. */
    public Duration next() {
        long ceiling = Math.min(max.toMillis(), initial.toMillis() << Math.min(attempt, 20));
        attempt++;
        long half = ceiling / 2;
        return Duration.ofMillis(half + ThreadLocalRandom.current().nextLong(half + 1));
    }

    public void reset() {
        attempt = 0;
    }
}
