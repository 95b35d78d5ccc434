package io.devhealth.cli.reliability;

import io.devhealth.schema.avro.HealthStatus;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the processor must emit, computed from its input alone: for one source per device and no
 * expiry, a transition {@code from→to} for every report whose health differs from the device's
 * previous one, starting from Unknown (a device nobody reported on).
 */
final class TransitionOracle {

    private final Map<String, HealthStatus> current = new HashMap<>();
    private final Map<String, List<String>> expected = new LinkedHashMap<>();
    private int total;

    /** A report of {@code health} for {@code deviceKey} was produced (in this order for the device). */
    synchronized void reported(String deviceKey, HealthStatus health) {
        HealthStatus from = current.getOrDefault(deviceKey, HealthStatus.UNKNOWN);
        if (from != health) {
            expected.computeIfAbsent(deviceKey, k -> new ArrayList<>()).add(step(from, health));
            total++;
        }
        current.put(deviceKey, health);
    }

    static String step(HealthStatus from, HealthStatus to) {
        return from + "->" + to;
    }

    synchronized Map<String, List<String>> expected() {
        Map<String, List<String>> copy = new LinkedHashMap<>();
        expected.forEach((k, v) -> copy.put(k, List.copyOf(v)));
        return copy;
    }

    synchronized int total() {
        return total;
    }
}
