package io.devhealth.processor.internals;

import io.devhealth.processor.DeviceHealthTopology;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.avro.PodDeviceStatus;
import java.time.Instant;
import java.util.function.Predicate;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * What both input processors share: the node's stores, and re-emitting the status of every pod a
 * change touches. Output values are PodDeviceStatus or HealthTransition, routed by child name.
 */
abstract class NodeStateProcessor<V> implements Processor<String, V, String, Object> {

    protected ProcessorContext<String, Object> context;
    protected KeyValueStore<String, DeviceHealthReport> deviceState;
    protected KeyValueStore<String, NodeAllocations> allocations;
    protected KeyValueStore<String, PodDeviceStatus> podStatus;

    @Override
    public void init(ProcessorContext<String, Object> context) {
        this.context = context;
        this.deviceState = context.getStateStore(DeviceHealthTopology.DEVICE_STATE_STORE);
        this.allocations = context.getStateStore(DeviceHealthTopology.NODE_ALLOCATIONS_STORE);
        this.podStatus = context.getStateStore(DeviceHealthTopology.POD_STATUS_STORE);
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
                context.forward(new Record<>(key, next, timestamp), DeviceHealthTopology.POD_STATUS_SINK);
            }
        }
    }
}
