package io.devhealth.processor.internals;

import io.devhealth.processor.DeviceHealthTopology;
import io.devhealth.processor.TopologyOptions;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.micrometer.core.instrument.Counter;
import java.time.Instant;
import java.util.function.Predicate;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowStore;

/**
 * What both input processors share: the node's stores, de-duplication, and re-emitting the status of
 * every pod a change touches. Output values are PodDeviceStatus or HealthTransition, routed by child name.
 */
abstract class NodeStateProcessor<V> implements Processor<String, V, String, Object> {

    protected final TopologyOptions options;
    protected ProcessorContext<String, Object> context;
    protected KeyValueStore<String, DeviceState> deviceState;
    protected KeyValueStore<String, NodeState> nodeState;
    protected KeyValueStore<String, NodeAllocations> allocations;
    protected KeyValueStore<String, PodDeviceStatus> podStatus;
    protected WindowStore<String, PodDeviceStatus> podHistory;
    protected WindowStore<String, HealthTransition> deviceHistory;
    private Counter duplicates;

    NodeStateProcessor(TopologyOptions options) {
        this.options = options;
    }

    @Override
    public void init(ProcessorContext<String, Object> context) {
        this.context = context;
        this.deviceState = context.getStateStore(DeviceHealthTopology.DEVICE_STATE_STORE);
        this.nodeState = context.getStateStore(DeviceHealthTopology.NODE_STATE_STORE);
        this.allocations = context.getStateStore(DeviceHealthTopology.NODE_ALLOCATIONS_STORE);
        this.podStatus = context.getStateStore(DeviceHealthTopology.POD_STATUS_STORE);
        this.podHistory = context.getStateStore(DeviceHealthTopology.POD_HISTORY_STORE);
        this.deviceHistory = context.getStateStore(DeviceHealthTopology.DEVICE_HISTORY_STORE);
        this.duplicates = Counter.builder("devhealth.processor.duplicates")
                .description("Records dropped because their (collector epoch, sequence) was already applied")
                .tag("input", inputName())
                .register(options.meters());
    }

    /** The input this processor reads, for metrics and logs. */
    abstract String inputName();

    protected NodeState node(String node, String cluster) {
        NodeState state = nodeState.get(node);
        return (state == null ? NodeState.empty(cluster) : state).withCluster(cluster);
    }

    protected void countDuplicate() {
        duplicates.increment();
    }

    /** Rebuilds and emits (when changed) the status of every pod on {@code node} that {@code affected} selects. */
    protected void refreshPods(String node, Predicate<PodAllocation> affected, long timestamp) {
        NodeAllocations nodeAllocations = allocations.get(node);
        if (nodeAllocations == null) {
            return;
        }
        Instant now = Instant.ofEpochMilli(timestamp);
        for (PodAllocation pod : nodeAllocations.getPods()) {
            if (!affected.test(pod)) {
                continue;
            }
            String key = StateKeys.pod(pod.getNamespace(), pod.getName());
            PodDeviceStatus previous = podStatus.get(key);
            PodDeviceStatus next = PodStatusBuilder.build(nodeAllocations.getCluster(), node, pod, deviceState::get, previous, now);
            if (PodStatusBuilder.differs(previous, next)) {
                podStatus.put(key, next);
                podHistory.put(key, next, timestamp);
                context.forward(new Record<>(key, next, timestamp), DeviceHealthTopology.POD_STATUS_SINK);
            }
        }
    }

    protected static String required(String value, String what) {
        if (value == null || value.isEmpty()) {
            throw new InvalidInputException("missing " + what);
        }
        return value;
    }
}
