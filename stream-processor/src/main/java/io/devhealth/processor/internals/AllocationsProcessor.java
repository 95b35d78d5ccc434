package io.devhealth.processor.internals;

import io.devhealth.processor.TopologyOptions;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.PodAllocation;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Keeps each node's latest allocation snapshot and emits the status of pods that appear or change. */
public final class AllocationsProcessor extends NodeStateProcessor<NodeAllocations> {

    private static final Logger LOGGER = LoggerFactory.getLogger(AllocationsProcessor.class);

    private NodeIdentityCheck identity;

    public AllocationsProcessor(TopologyOptions options) {
        super(options);
    }

    @Override
    public void init(ProcessorContext<String, Object> context) {
        super.init(context);
        identity = new NodeIdentityCheck(options.enforcePrincipals(), options.meters(), inputName());
    }

    @Override
    String inputName() {
        return "node-allocations";
    }

    @Override
    public void process(Record<String, NodeAllocations> record) {
        String node = required(record.key(), "record key (node name)");
        NodeAllocations snapshot = record.value();
        if (snapshot == null) {
            throw new InvalidInputException("node-allocations record without value for node " + node);
        }
        identity.check(node, snapshot.getNode(), record.headers());
        for (PodAllocation pod : snapshot.getPods()) {
            required(pod.getNamespace(), "pod namespace");
            required(pod.getName(), "pod name");
        }
        NodeState state = node(node, snapshot.getCluster());
        if (!state.allocations().admits(snapshot.getCollectorEpoch(), snapshot.getSequence())) {
            countDuplicate();
            LOGGER.debug("duplicate allocations dropped node={} epoch={} sequence={}", node, snapshot.getCollectorEpoch(),
                    snapshot.getSequence());
            return;
        }
        nodeState.put(node, state.withAllocations(state.allocations().advance(snapshot.getCollectorEpoch(), snapshot.getSequence())));
        allocations.put(node, snapshot);
        // Pods that left the node keep their last status: it is the post-mortem record.
        refreshPods(node, pod -> true, record.timestamp());
    }
}
