package io.devhealth.query.routing;

import io.devhealth.processor.DeviceHealthTopology;
import io.devhealth.processor.state.FleetCounts;
import io.devhealth.query.state.QueryViews;
import io.devhealth.query.state.StateQueries;
import io.devhealth.schema.avro.Verdict;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.Map;
import java.util.TreeMap;

/** A fleet summary being gathered: transition counts and verdict counts by {@code DIMENSION:value}, from parts added up. */
public final class FleetSums {

    private final Map<String, FleetCounts> counts = new TreeMap<>();
    private final Map<String, Map<Verdict, Long>> verdicts = new TreeMap<>();

    /**
     * One instance's part, read from {@code stores}: the partitions {@code asked} names, or with null every partition
     * active there.
     */
    public static FleetSums read(StateQueries stores, Instant from, Instant to, FleetPartitions asked) {
        FleetSums part = new FleetSums();
        part.counts.putAll(stores.fleetCounts(from, to, asked == null ? null : asked.of(DeviceHealthTopology.FLEET_STATS_STORE)));
        stores.fleetVerdicts(from, to, asked == null ? null : asked.of(DeviceHealthTopology.FLEET_VERDICT_STORE))
                .forEach(part::addVerdicts);
        return part;
    }

    /** A part another instance answered. */
    public static FleetSums of(QueryViews.FleetSummary answer) {
        FleetSums part = new FleetSums();
        answer.dimensions().forEach((dimension, entries) -> entries.forEach(e -> part.counts.merge(dimension + ":" + e.key(),
                new FleetCounts("", e.toUnhealthy(), e.toUnknown(), e.toHealthy()), FleetCounts::plus)));
        if (answer.verdicts() != null) {
            answer.verdicts().forEach((dimension, entries) -> entries.forEach(e -> part.addVerdicts(dimension + ":" + e.key(),
                    Map.of(Verdict.DEVICE_FAILURE, e.deviceFailure(), Verdict.NO_DEVICE_FAILURE, e.noDeviceFailure(),
                            Verdict.UNKNOWN, e.unknown()))));
        }
        return part;
    }

    public void add(FleetSums part) {
        part.counts.forEach((key, value) -> counts.merge(key, value, FleetCounts::plus));
        part.verdicts.forEach(this::addVerdicts);
    }

    private void addVerdicts(String key, Map<Verdict, Long> byVerdict) {
        Map<Verdict, Long> sum = verdicts.computeIfAbsent(key, k -> new EnumMap<>(Verdict.class));
        byVerdict.forEach((verdict, count) -> sum.merge(verdict, count, Long::sum));
    }

    public QueryViews.FleetSummary view(Instant from, Instant to, Duration window) {
        return QueryViews.fleetSummary(from, to, window, counts, verdicts);
    }
}
