package io.devhealth.query.routing;

import io.devhealth.query.http.Excerpt;
import io.devhealth.query.http.QueryException;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The partitions of the fleet stores one instance is asked to count for a fleet summary, so that an instance
 * gathering the summary counts each partition exactly once: from its active copy, or from a standby where the
 * active one's instance cannot answer. Travels in {@value Forwarder#FLEET_PARTITIONS_HEADER} as
 * {@code fleet-stats=0,2;fleet-verdicts=1}.
 */
public record FleetPartitions(Map<String, Set<Integer>> byStore) {

    /** One partition of one fleet store. */
    public record Part(String store, int partition) {}

    public FleetPartitions {
        Map<String, Set<Integer>> copy = new TreeMap<>();
        byStore.forEach((store, partitions) -> copy.put(store, Set.copyOf(partitions)));
        byStore = Map.copyOf(copy);
    }

    public static FleetPartitions of(Collection<Part> parts) {
        return new FleetPartitions(parts.stream().collect(Collectors.groupingBy(Part::store,
                Collectors.mapping(Part::partition, Collectors.toSet()))));
    }

    /** The partitions of {@code store} to count: none when the store is not named. */
    Set<Integer> of(String store) {
        return byStore.getOrDefault(store, Set.of());
    }

    public String header() {
        return new TreeMap<>(byStore).entrySet().stream()
                .map(e -> e.getKey() + "=" + new TreeSet<>(e.getValue()).stream().map(String::valueOf).collect(Collectors.joining(",")))
                .collect(Collectors.joining(";"));
    }

    /** The header's partitions; a 400 for anything but {@code store=p,p;store=p}. */
    public static FleetPartitions parse(String header) {
        Map<String, Set<Integer>> byStore = new TreeMap<>();
        for (String entry : header.split(";", -1)) {
            int equals = entry.indexOf('=');
            if (equals <= 0) {
                throw QueryException.badRequest(Forwarder.FLEET_PARTITIONS_HEADER + " must be store=p,p;store=p, got '"
                        + Excerpt.of(header) + "'");
            }
            Set<Integer> partitions = new TreeSet<>();
            String list = entry.substring(equals + 1);
            for (String partition : list.isEmpty() ? new String[0] : list.split(",", -1)) {
                try {
                    partitions.add(Integer.parseInt(partition));
                } catch (NumberFormatException e) {
                    throw QueryException.badRequest(Forwarder.FLEET_PARTITIONS_HEADER + " has a partition that is no number: '"
                            + Excerpt.of(partition) + "'");
                }
            }
            byStore.put(entry.substring(0, equals), partitions);
        }
        return new FleetPartitions(byStore);
    }
}
