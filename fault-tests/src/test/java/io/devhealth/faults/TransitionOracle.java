package io.devhealth.faults;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;

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

    /** The health the device's last report gave it (Unknown for a device nobody reported on). */
    synchronized HealthStatus current(String deviceKey) {
        return current.getOrDefault(deviceKey, HealthStatus.UNKNOWN);
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

    /**
     * How {@code received} (health-transitions as read, keyed by device) differs from what is expected:
     * transitions with an id or a content (device, from, to, at) seen before, expected transitions not
     * received, and devices whose sequence of {@code from->to} is not exactly the expected one.
     */
    synchronized Check check(List<ConsumerRecord<String, HealthTransition>> received) {
        Map<String, List<String>> actual = new LinkedHashMap<>();
        Set<String> ids = new HashSet<>();
        Set<String> contents = new HashSet<>();
        int duplicateIds = 0;
        int duplicateContents = 0;
        for (ConsumerRecord<String, HealthTransition> record : received) {
            HealthTransition t = record.value();
            if (!ids.add(t.getId())) {
                duplicateIds++;
            }
            if (!contents.add(record.key() + "|" + t.getFrom() + "|" + t.getTo() + "|" + t.getAt())) {
                duplicateContents++;
            }
            actual.computeIfAbsent(record.key(), k -> new ArrayList<>()).add(step(t.getFrom(), t.getTo()));
        }
        Map<String, List<String>> wanted = expected();
        int missing = 0;
        int devicesWrong = 0;
        for (Map.Entry<String, List<String>> device : wanted.entrySet()) {
            List<String> got = actual.getOrDefault(device.getKey(), List.of());
            missing += Math.max(0, device.getValue().size() - got.size());
            devicesWrong += device.getValue().equals(got) ? 0 : 1;
        }
        return new Check(duplicateIds, duplicateContents, missing, devicesWrong, wanted.size(), wanted, actual);
    }

    /** The differences {@link #check} found, and both sides per device (for the assertion's message). */
    record Check(int duplicateIds, int duplicateContents, int missing, int devicesWithWrongSequence, int devices,
                 Map<String, List<String>> expected, Map<String, List<String>> actual) {}
}
