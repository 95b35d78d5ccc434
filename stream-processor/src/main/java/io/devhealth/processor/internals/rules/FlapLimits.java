package io.devhealth.processor.internals.rules;

import java.time.Duration;
import java.util.Objects;

/**
 * When one source's changes of health about a device count as flapping ({@link Flaps}): more than
 * {@code flips} changes within {@code window}; the hold ends after {@code quiet} without a change.
 * {@code flips == 0}: no damping.
 */
public record FlapLimits(int flips, Duration window, Duration quiet) {

    public static final FlapLimits OFF = new FlapLimits(0, Duration.ofSeconds(1), Duration.ofSeconds(1));

    public FlapLimits {
        Objects.requireNonNull(window, "window");
        Objects.requireNonNull(quiet, "quiet");
        if (flips < 0) {
            throw new IllegalArgumentException("flap threshold must not be negative: " + flips);
        }
        if (window.toMillis() <= 0 || quiet.toMillis() <= 0) {
            throw new IllegalArgumentException("flap window " + window + " and quiet period " + quiet + " must be positive");
        }
    }

    public boolean enabled() {
        return flips > 0;
    }

    long windowMs() {
        return window.toMillis();
    }

    long quietMs() {
        return quiet.toMillis();
    }
}
