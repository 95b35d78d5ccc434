package io.devhealth.processor.internals;

import io.devhealth.schema.avro.HealthStatus;

/** The human-readable message of a HealthTransition: it names the deciding source and the reason. */
final class TransitionMessages {

    private TransitionMessages() {}

    static String describe(DeviceState state) {
        if (DeviceHealthMerger.REASON_SILENT.equals(state.reason()) || DeviceHealthMerger.REASON_NEVER_REPORTED.equals(state.reason())) {
            return state.message();
        }
        String deciding = state.sources().values().stream()
                .filter(s -> s.health() == state.health() && s.freshAt(state.since()))
                .map(SourceReport::label)
                .reduce((a, b) -> a + ", " + b)
                .orElse(state.source().toString());
        StringBuilder out = new StringBuilder(deciding).append(" reports ").append(label(state.health()));
        if (state.reason() != null) {
            out.append(" (").append(state.reason()).append(')');
        }
        if (state.message() != null) {
            out.append(": ").append(state.message());
        }
        return out.toString();
    }

    private static String label(HealthStatus health) {
        return switch (health) {
            case HEALTHY -> "Healthy";
            case UNHEALTHY -> "Unhealthy";
            case UNKNOWN -> "Unknown";
        };
    }
}
