package io.devhealth.processor.internals.fleet;

import io.devhealth.processor.state.FleetCounts;

/**
 * Transitions of one fleet window and dimension value that {@link FleetCombiner} has read and not yet
 * sent to the fleet counter, and the time of the latest of them (the time the flushed record carries).
 * Value of the {@code fleet-pending} store.
 */
public record PendingFleetCounts(FleetCounts counts, long latestMs) {
}
