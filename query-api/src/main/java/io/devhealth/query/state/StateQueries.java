package io.devhealth.query.state;

import io.devhealth.processor.state.FleetCounts;
import io.devhealth.schema.avro.Verdict;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** The questions one instance answers from its own state; {@code QueryServer} routes to the instance that owns a key. */
public interface StateQueries {

    /**
     * The pod's device status as of {@code at} (null: the latest, which for an ended pod is as it ended), from this
     * instance, which must hold the pod's partition ({@code QueryException.notHeld} otherwise).
     */
    Optional<QueryViews.PodDevices> pod(String namespace, String name, Instant at);

    /** Transitions of a device in [from, to], oldest first, a page of at most {@code limit}; {@code token} resumes. */
    Optional<QueryViews.DeviceHistory> deviceHistory(String node, String driver, String pool, String device, Instant from, Instant to,
                                                     int limit, String token);

    /** The devices of a node, a page of at most {@code limit}; {@code token} resumes. */
    Optional<QueryViews.NodeDevices> nodeDevices(String node, int limit, String token);

    /**
     * This instance's part of the fleet counts (windows that started in [from, to]), by {@code DIMENSION:value}: its
     * copies of {@code partitions} of the fleet-stats store, or with null every partition active here.
     */
    Map<String, FleetCounts> fleetCounts(Instant from, Instant to, Set<Integer> partitions);

    /** The pod's verdict as of {@code at} (null: the latest), if this instance holds it. */
    Optional<QueryViews.PodVerdict> verdict(String namespace, String name, Instant at);

    /**
     * This instance's part of the terminated pods' verdicts (windows that started in [from, to]), by {@code DIMENSION:value},
     * as {@link #fleetCounts} over the fleet-verdicts store.
     */
    Map<String, Map<Verdict, Long>> fleetVerdicts(Instant from, Instant to, Set<Integer> partitions);
}
