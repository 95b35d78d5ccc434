package io.devhealth.collector.nvml.internals;

import io.devhealth.collector.nvml.HealthPolicy.Action;
import io.devhealth.schema.avro.HealthStatus;

/** What a policy rule says about one observation: reason code, health, text. */
public record FindingSpec(String reason, HealthStatus health, String text) {

    /** The health an action gives, or null for IGNORE. */
    static HealthStatus health(Action action) {
        return switch (action) {
            case UNHEALTHY -> HealthStatus.UNHEALTHY;
            case UNKNOWN -> HealthStatus.UNKNOWN;
            case HEALTHY_WITH_MESSAGE -> HealthStatus.HEALTHY;
            case IGNORE -> null;
        };
    }
}
