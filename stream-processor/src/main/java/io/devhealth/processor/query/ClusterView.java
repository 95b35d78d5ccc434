package io.devhealth.processor.query;

import java.util.List;
import java.util.Optional;
import org.apache.kafka.streams.state.HostInfo;

/** What the query API needs to know about the processor instances: readiness, who owns a node or a pod. */
interface ClusterView {

    /** Whether this instance serves queries (Kafka Streams RUNNING). */
    boolean ready();

    /** The state in words, for {@code /readyz} and 503 messages. */
    String state();

    /** The instance that owns the node's state, empty while that is not known (rebalancing). */
    Optional<HostInfo> ownerOfNode(String node);

    /** Whether {@code host} is this instance (its advertised {@code application.server}). */
    boolean isSelf(HostInfo host);

    /** The instance that holds the pod's verdict (pod-verdicts is keyed by pod), empty while that is not known. */
    Optional<HostInfo> ownerOfPodVerdict(String podKey);

    /**
     * The instance that holds the pod's accepted status and history (read back from pod-device-status,
     * keyed by pod), empty while that is not known.
     */
    Optional<HostInfo> ownerOfPod(String podKey);

    /**
     * The instances that hold a part of the fleet counts or of the verdict counts (both are partitioned by
     * dimension value, in two sub-topologies).
     */
    List<HostInfo> fleetInstances();

    /** Answers from this instance's stores. */
    StateQueries local();
}
