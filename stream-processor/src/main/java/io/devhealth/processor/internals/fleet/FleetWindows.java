package io.devhealth.processor.internals.fleet;

import java.time.Duration;

/**
 * The tumbling windows fleet-stats counts transitions in, by the transitions' own time, with Kafka
 * Streams' own lateness rule: a window takes transitions until its end plus the grace has passed in
 * stream time (the highest time a task has seen). Both stages of the fleet path apply it:
 * {@link FleetCombiner} before it folds a transition, on its own task's stream time, and
 * {@link FleetCounter} before it counts, on the repartitioned stream's.
 */
public record FleetWindows(long sizeMs, long graceMs) {

    public FleetWindows(Duration size, Duration grace) {
        this(size.toMillis(), grace.toMillis());
    }

    public FleetWindows {
        if (sizeMs <= 0 || graceMs < 0) {
            throw new IllegalArgumentException("fleet window " + sizeMs + " ms and grace " + graceMs + " ms");
        }
    }

    /** The start of the window that time {@code atMs} falls in. */
    long start(long atMs) {
        return atMs - atMs % sizeMs;
    }

    /** Whether the window starting at {@code windowStartMs} is closed at stream time {@code streamTimeMs}. */
    boolean closed(long windowStartMs, long streamTimeMs) {
        return windowStartMs + sizeMs + graceMs <= streamTimeMs;
    }
}
