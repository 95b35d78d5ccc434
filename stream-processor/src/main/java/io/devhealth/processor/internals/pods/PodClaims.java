package io.devhealth.processor.internals.pods;

import io.devhealth.processor.internals.input.InvalidInputException;
import io.devhealth.processor.internals.input.NodeIdentityCheck;
import io.devhealth.processor.internals.stores.TopologyNames;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.serde.Encoded;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which node's word about a pod the processor keeps. A node can name any pod in its allocations, and
 * the node processor keeps each node's view apart; this processor reads pod-device-status back (keyed
 * by pod, so every node's statuses of one pod meet here, in the order they were committed) and keeps
 * one of them: the pod's accepted latest status in {@value TopologyNames#POD_STATUS_STORE}, which is
 * the claim (it names the holding node and the pod's uid), and every accepted status in
 * {@value TopologyNames#POD_HISTORY_STORE}. The query API answers pods from these two stores only.
 *
 * <ul>
 *   <li>A status when no node holds the pod, or from the node that holds it: accepted (the latest is
 *       replaced, the history appended).</li>
 *   <li>A status from another node while one holds the pod: refused. It becomes a dead letter whose
 *       reason names the pod, the holder and the claimant, and is counted in
 *       {@value #METER}{outcome={@value #REFUSED}}.</li>
 *   <li>A tombstone (a node released the pod: it left the node's allocations, see
 *       {@link DepartedPods.Kept#released()}) from the holder: the claim ends, the latest is deleted;
 *       the history stays for its retention. From any other node it changes nothing and is counted in
 *       {@value #METER}{outcome={@value #IGNORED_RELEASE}}.</li>
 * </ul>
 *
 * <p>The first claim wins. A node that names a pod before the pod's own node does (a hostile node
 * naming a pod it never ran) holds it until it releases it, and the statuses of the pod's own node are
 * refused meanwhile; the dead letters and the count are how an operator sees it. What Kubernetes gets
 * is not decided here: the sink writes a status only to a pod whose {@code spec.nodeName} is the node
 * the status names.
 */
public final class PodClaims implements Processor<String, Encoded<PodDeviceStatus>, Void, Void> {

    private static final Logger LOGGER = LoggerFactory.getLogger(PodClaims.class);

    /** Counted without pod or node: one series per outcome, whatever the size of the fleet. */
    static final String METER = "devhealth.processor.pod.claims";
    /** Tag {@code outcome} of {@value #METER}: a status from a node while another held the pod. */
    static final String REFUSED = "refused";
    /** Tag {@code outcome} of {@value #METER}: a release from a node that did not hold the pod. */
    static final String IGNORED_RELEASE = "ignored_release";

    private final MeterRegistry meters;
    private Counter refused;
    private Counter ignoredReleases;
    private KeyValueStore<String, Encoded<PodDeviceStatus>> latest;
    private WindowStore<String, Encoded<PodDeviceStatus>> history;
    /**
     * The node holding each pod this task has seen (empty: none), as {@link #latest} says: read from the store the
     * first time and kept, so that a status from the holder, nearly every status, is checked without decoding the
     * holder's whole status. This processor is the store's only writer; the map is emptied whenever Kafka Streams
     * (re)initializes the task, whose store is then as committed.
     */
    private final Map<String, Optional<String>> holders = new HashMap<>();

    public PodClaims(MeterRegistry meters) {
        this.meters = meters;
    }

    @Override
    public void init(ProcessorContext<Void, Void> context) {
        latest = context.getStateStore(TopologyNames.POD_STATUS_STORE);
        history = context.getStateStore(TopologyNames.POD_HISTORY_STORE);
        holders.clear();
        // Registered at 0 before the first refusal, so that an increase() alert sees the first one.
        refused = counter(meters, REFUSED);
        ignoredReleases = counter(meters, IGNORED_RELEASE);
    }

    @Override
    public void process(Record<String, Encoded<PodDeviceStatus>> record) {
        String pod = record.key();
        if (pod == null || pod.isEmpty()) {
            throw new InvalidInputException("pod status without key (pod)");
        }
        String holder = holderOf(pod);
        if (record.value() == null) {
            release(pod, holder, releasingNode(record.headers()));
            return;
        }
        PodDeviceStatus status = record.value().value();
        String claimant = status.getNode();
        if (claimant == null || claimant.isEmpty()) {
            throw new InvalidInputException("status of pod " + pod + " without node");
        }
        if (holder != null && !holder.equals(claimant)) {
            refused.increment();
            LOGGER.warn("pod claim refused pod={} holder={} holderUid={} claimant={} claimantUid={}", pod, holder,
                    latest.get(pod).value().getPod().getUid(), claimant, status.getPod().getUid());
            // Thrown before any store changes: the dead-letter handler keeps the record and processing goes on.
            throw new InvalidInputException("pod " + pod + " is held by node " + holder + ": status from node " + claimant
                    + " refused");
        }
        if (holder == null) {
            LOGGER.debug("pod claimed pod={} node={} uid={}", pod, claimant, status.getPod().getUid());
        }
        // Kept as read: the bytes the node processor wrote (Encoded), not encoded again.
        latest.put(pod, record.value());
        history.put(pod, record.value(), record.timestamp());
        holders.put(pod, Optional.of(claimant));
    }

    /** The node holding {@code pod}; null when none does. */
    private String holderOf(String pod) {
        return holders.computeIfAbsent(pod, unseen -> Optional.ofNullable(latest.get(unseen)).map(held -> held.value().getNode()))
                .orElse(null);
    }

    private void release(String pod, String holder, String node) {
        if (holder == null || !holder.equals(node)) {
            ignoredReleases.increment();
            LOGGER.info("pod release ignored pod={} node={} holder={}", pod, node, holder);
            return;
        }
        latest.delete(pod);
        holders.put(pod, Optional.empty());
        LOGGER.debug("pod released pod={} node={}", pod, node);
    }

    /** The node a tombstone names ({@link NodeIdentityCheck#NODE_HEADER}); empty when it names none. */
    private static String releasingNode(Headers headers) {
        Header header = headers == null ? null : headers.lastHeader(NodeIdentityCheck.NODE_HEADER);
        return header == null || header.value() == null ? "" : new String(header.value(), StandardCharsets.UTF_8);
    }

    private static Counter counter(MeterRegistry meters, String outcome) {
        return Counter.builder(METER)
                .description("Pod statuses refused because another node held the pod, and pod releases ignored because the"
                        + " releasing node did not hold it")
                .tag("outcome", outcome)
                .register(meters);
    }
}
