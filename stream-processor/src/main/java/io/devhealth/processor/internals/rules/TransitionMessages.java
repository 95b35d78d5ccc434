package io.devhealth.processor.internals.rules;

import io.devhealth.schema.HealthWords;
import java.time.Instant;
import java.util.Optional;

/** The human-readable message of a HealthTransition: it names the deciding source and the reason. */
public final class TransitionMessages {

    private TransitionMessages() {}

    /** The message of the transition from {@code previous} to {@code state}. */
    public static String describe(DeviceState previous, DeviceState state) {
        String message = describe(state);
        if (!state.damped()) {
            Optional<Flaps.Held> ended = previous.hold();
            if (ended.isPresent()) {
                // The one transition that ends a hold says how much flapping it kept out of the feed.
                return message + " (flap damping ended: " + ended.get().flips() + " changes of health held since "
                        + Instant.ofEpochMilli(ended.get().since()) + ")";
            }
        }
        return message;
    }

    private static String describe(DeviceState state) {
        if (DeviceHealthMerger.REASON_SILENT.equals(state.reason()) || DeviceHealthMerger.REASON_NEVER_REPORTED.equals(state.reason())) {
            return state.message();
        }
        String deciding = state.sources().values().stream()
                .filter(s -> s.shownHealth() == state.health() && s.freshAt(state.since()))
                .map(SourceReport::label)
                .reduce((a, b) -> a + ", " + b)
                .orElse(state.source().toString());
        StringBuilder out = new StringBuilder(deciding).append(" reports ").append(HealthWords.of(state.health()));
        if (state.reason() != null) {
            out.append(" (").append(state.reason()).append(')');
        }
        if (state.message() != null) {
            out.append(": ").append(state.message());
        }
        return out.toString();
    }
}
