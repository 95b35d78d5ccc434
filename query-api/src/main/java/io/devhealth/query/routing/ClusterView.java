package io.devhealth.query.routing;

import io.devhealth.query.state.StateQueries;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.streams.state.HostInfo;

/** What the query API needs to know about the processor instances: readiness, who holds a node or a pod. */
public interface ClusterView {

    /**
     * The instances that hold a key's partition: the one where it is active, and those that keep a standby
     * copy of it ({@code num.standby.replicas}), which can answer, a little behind, while the active one cannot.
     */
    record Holders(HostInfo active, List<HostInfo> standbys) {
        public Holders {
            standbys = List.copyOf(standbys);
        }

        public static Holders activeOnly(HostInfo active) {
            return new Holders(active, List.of());
        }
    }

    /** Whether this instance serves queries (Kafka Streams RUNNING). */
    boolean ready();

    /** The state in words, for {@code /readyz} and 503 messages. */
    String state();

    /** The instances that hold the node's state, empty while that is not known (before the first assignment). */
    Optional<Holders> holdersOfNode(String node);

    /** Whether {@code host} is this instance (its advertised {@code application.server}). */
    boolean isSelf(HostInfo host);

    /** The instances that hold the pod's verdict (pod-verdicts is keyed by pod), empty while that is not known. */
    Optional<Holders> holdersOfPodVerdict(String podKey);

    /**
     * The instances that hold the pod's accepted status and history (read back from pod-device-status,
     * keyed by pod), empty while that is not known.
     */
    Optional<Holders> holdersOfPod(String podKey);

    /**
     * Who holds each partition of the fleet counts' and the verdict counts' stores (both partitioned by dimension
     * value, in two sub-topologies), by store name and partition; empty while that is not known.
     */
    Map<String, List<Holders>> fleetHolders();

    /** Answers from this instance's active stores. */
    StateQueries local();

    /**
     * Answers from this instance's standby copies (and its active ones), each at most as far behind its
     * changelog as {@link StandbyReads} allows; {@code QueryException.notHeld} where this instance keeps no copy.
     */
    StateQueries standbyCopies();
}
