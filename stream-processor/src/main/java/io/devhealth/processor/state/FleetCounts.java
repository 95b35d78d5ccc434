package io.devhealth.processor.state;

import io.devhealth.schema.avro.HealthTransition;

/**
 * Transitions counted by target health in one fleet-stats window for one dimension value. Value of
 * the windowed {@code fleet-stats} store.
 */
public record FleetCounts(String cluster, long toUnhealthy, long toUnknown, long toHealthy) {

    public static FleetCounts empty() {
        return new FleetCounts("", 0, 0, 0);
    }

    public FleetCounts add(HealthTransition transition) {
        String name = transition.getCluster() == null || transition.getCluster().isEmpty() ? cluster : transition.getCluster();
        return switch (transition.getTo()) {
            case UNHEALTHY -> new FleetCounts(name, toUnhealthy + 1, toUnknown, toHealthy);
            case UNKNOWN -> new FleetCounts(name, toUnhealthy, toUnknown + 1, toHealthy);
            case HEALTHY -> new FleetCounts(name, toUnhealthy, toUnknown, toHealthy + 1);
        };
    }

    public FleetCounts plus(FleetCounts other) {
        return new FleetCounts(cluster.isEmpty() ? other.cluster : cluster, toUnhealthy + other.toUnhealthy,
                toUnknown + other.toUnknown, toHealthy + other.toHealthy);
    }

    public long total() {
        return toUnhealthy + toUnknown + toHealthy;
    }
}
