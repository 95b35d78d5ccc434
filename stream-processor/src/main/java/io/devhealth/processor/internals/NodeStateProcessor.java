package io.devhealth.processor.internals;

import io.devhealth.processor.DeviceHealthTopology;
import io.devhealth.processor.TopologyOptions;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.InventoryDevice;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeDevices;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.micrometer.core.instrument.Counter;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowStore;

/**
 * The plumbing under {@link NodeProcessor}: the stores, what is kept decoded of them in memory, the
 * duplicate counters, and re-emitting the status of the pods a change touches — kept apart from the
 * processor's rules. Output values are PodDeviceStatus or HealthTransition, routed by child name.
 */
abstract class NodeStateProcessor<V> implements Processor<String, V, String, Object> {

    /** Tag {@code kind} of {@code devhealth.processor.duplicates}: device reports and heartbeats. */
    static final String DUPLICATE_REPORTS = "reports";
    /** Tag {@code kind} of {@code devhealth.processor.duplicates}: allocation snapshots. */
    static final String DUPLICATE_ALLOCATIONS = "allocations";
    /** Tag {@code kind} of {@code devhealth.processor.duplicates}: inventories. */
    static final String DUPLICATE_INVENTORY = "inventory";

    /** Nodes whose allocations and inventory stay decoded per task (a few KiB each). */
    private static final int DECODED_NODES = 4_096;
    /** Devices whose state stays decoded per task (about half a KiB each): the devices of 4,096 nodes of 8 GPUs. */
    private static final int DECODED_DEVICES = 32_768;

    protected final TopologyOptions options;
    protected ProcessorContext<String, Object> context;
    /** Device states as stored, without their pending refreshes: {@link #device} gives a device's current state. */
    protected DecodedCache<DeviceState> deviceState;
    private KeyValueStore<String, NodeState> nodeState;
    protected DecodedCache<NodeAllocations> allocations;
    protected DecodedCache<NodeDevices> inventory;
    protected KeyValueStore<String, PodDeviceStatus> podStatus;
    protected WindowStore<String, PodDeviceStatus> podHistory;
    protected WindowStore<String, HealthTransition> deviceHistory;
    /** Every node of this task's partitions, decoded: read on every record, and by the expiry punctuator. */
    private final Map<String, NodeState> nodes = new HashMap<>();
    /** Which pods use which device, per node, for the allocation snapshot the node has now. */
    private final Map<String, PodIndex> podIndexes = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, PodIndex> eldest) {
            return size() > DECODED_NODES;
        }
    };
    private final Map<String, Counter> duplicates = new HashMap<>();

    NodeStateProcessor(TopologyOptions options) {
        this.options = options;
    }

    @Override
    public void init(ProcessorContext<String, Object> context) {
        this.context = context;
        // As stored: a device's current state is that with its node's pending refresh applied (device()).
        this.deviceState = new DecodedCache<>(context.getStateStore(DeviceHealthTopology.DEVICE_STATE_STORE), DECODED_DEVICES);
        this.nodeState = context.getStateStore(DeviceHealthTopology.NODE_STATE_STORE);
        this.allocations = new DecodedCache<>(context.getStateStore(DeviceHealthTopology.NODE_ALLOCATIONS_STORE), DECODED_NODES);
        this.inventory = new DecodedCache<>(context.getStateStore(DeviceHealthTopology.NODE_INVENTORY_STORE), DECODED_NODES);
        this.podStatus = context.getStateStore(DeviceHealthTopology.POD_STATUS_STORE);
        this.podHistory = context.getStateStore(DeviceHealthTopology.POD_HISTORY_STORE);
        this.deviceHistory = context.getStateStore(DeviceHealthTopology.DEVICE_HISTORY_STORE);
        nodes.clear();
        podIndexes.clear();
        try (KeyValueIterator<String, NodeState> all = nodeState.all()) {
            all.forEachRemaining(entry -> nodes.put(entry.key, entry.value));
        }
        // By the kind of record, as the node's watermarks are kept (NodeState): not by topic, since
        // node-events carries all kinds.
        for (String kind : List.of(DUPLICATE_REPORTS, DUPLICATE_ALLOCATIONS, DUPLICATE_INVENTORY)) {
            duplicates.put(kind, Counter.builder("devhealth.processor.duplicates")
                    .description("Records dropped because their (collector epoch, sequence) was already applied")
                    .tag("kind", kind)
                    .register(options.meters()));
        }
    }

    protected NodeState node(String node, String cluster) {
        NodeState state = nodes.get(node);
        return (state == null ? NodeState.empty(cluster) : state).withCluster(cluster);
    }

    /** The node's stored state; null before its first record. */
    protected NodeState storedNode(String node) {
        return nodes.get(node);
    }

    /**
     * Makes {@code state} the node's state. The store is written behind ({@link WriteBehindKeyValueStore}):
     * a record moves its node's clock and watermark, and maybe a pending refresh or two, and however
     * often that happens between two commits the node is encoded once.
     */
    protected void putNode(String node, NodeState state) {
        nodes.put(node, state);
        nodeState.put(node, state);
    }

    /**
     * Has the node's value written at the next commit: for a change of its pending refreshes, which
     * are changed in place ({@link RefreshTable}), after its state was last put.
     */
    protected void touchNode(String node) {
        nodeState.put(node, nodes.get(node));
    }

    /** The current state of device {@code key} of {@code node}: as stored, with the node's pending refresh for it; null if none. */
    protected DeviceState device(String node, String key) {
        return current(node, key, deviceState.get(key));
    }

    /** {@code stored}, the stored state of device {@code key} of {@code node}, with the node's pending refresh for it. */
    protected DeviceState current(String node, String key, DeviceState stored) {
        NodeState state = nodes.get(node);
        return state == null ? stored : state.deviceState(key, stored);
    }

    /** Writes the state of device {@code key} (of {@code node}) whole, so its node no longer keeps a refresh for it. */
    protected void putDevice(String node, String key, DeviceState state) {
        deviceState.put(key, state);
        forgetRefresh(node, key);
    }

    /** Deletes the state of device {@code key} (of {@code node}), and the refresh its node kept for it. */
    protected void deleteDevice(String node, String key) {
        deviceState.delete(key);
        forgetRefresh(node, key);
    }

    private void forgetRefresh(String node, String key) {
        NodeState current = nodes.get(node);
        if (current != null && current.refreshes().remove(key) != null) {
            touchNode(node);
        }
    }

    /** @param kind {@link #DUPLICATE_REPORTS}, {@link #DUPLICATE_ALLOCATIONS} or {@link #DUPLICATE_INVENTORY} */
    protected void countDuplicate(String kind) {
        duplicates.get(kind).increment();
    }

    /** Rebuilds and emits (when changed) the status of every pod on {@code node} that {@code affected} selects. */
    protected void refreshPods(String node, Predicate<PodAllocation> affected, long timestamp) {
        NodeAllocations nodeAllocations = allocations.get(node);
        if (nodeAllocations != null) {
            refreshPods(node, nodeAllocations.getPods().stream().filter(affected).toList(), timestamp);
        }
    }

    /** Rebuilds and emits (when changed) the status of {@code pods}, pods of {@code node}'s current allocations. */
    protected void refreshPods(String node, List<PodAllocation> pods, long timestamp) {
        NodeAllocations nodeAllocations = allocations.get(node);
        if (nodeAllocations == null || pods.isEmpty()) {
            return;
        }
        Instant now = Instant.ofEpochMilli(timestamp);
        for (PodAllocation pod : pods) {
            String key = StateKeys.pod(pod.getNamespace(), pod.getName());
            PodDeviceStatus previous = podStatus.get(key);
            PodDeviceStatus next = PodStatusBuilder.build(nodeAllocations.getCluster(), node, pod, deviceKey -> device(node, deviceKey),
                    id -> deviceById(node, id), previous, now);
            if (PodStatusBuilder.differs(previous, next)) {
                podStatus.put(key, next);
                podHistory.put(key, next, timestamp);
                context.forward(new Record<>(key, next, timestamp), DeviceHealthTopology.POD_STATUS_SINK);
            }
        }
    }

    /**
     * The state a device-plugin device id (a GPU UUID) reads its health from: the DRA device(s) the
     * inventory maps it to (the worst of them when several: MIG slices of one GPU), else the state
     * kept under the UUID itself; null when no source ever reported the device.
     */
    protected DeviceState deviceById(String node, String id) {
        List<InventoryDevice> mapped = DeviceIdentity.devicesWithUuid(inventory.get(node), id);
        DeviceState worst = null;
        for (InventoryDevice device : mapped) {
            DeviceState state = device(node, StateKeys.device(node, device.getDriver(), device.getPool(), device.getDevice()));
            if (state != null && (worst == null || PodStatusBuilder.worse(worst.health(), state.health()) != worst.health())) {
                worst = state;
            }
        }
        return worst != null ? worst : device(node, StateKeys.uuid(node, id));
    }

    /**
     * The pods on {@code node} using {@code device}, in the allocation snapshot's order: as a DRA claim
     * device, or as a device-plugin device id equal to its UUID (its own, or the one the inventory maps
     * its DRA identity to).
     */
    protected List<PodAllocation> podsUsing(String node, DeviceState device) {
        NodeAllocations snapshot = allocations.get(node);
        if (snapshot == null) {
            return List.of();
        }
        PodIndex index = podIndexes.get(node);
        if (index == null || !index.isFor(snapshot)) {
            index = new PodIndex(node, snapshot);
            podIndexes.put(node, index);
        }
        boolean dra = !device.driver().isEmpty();
        String uuid = device.uuid() != null ? device.uuid()
                : dra ? DeviceIdentity.uuidOf(inventory.get(node), device.driver(), device.pool(), device.device()) : null;
        return index.podsUsing(dra ? StateKeys.device(node, device.driver(), device.pool(), device.device()) : null, uuid);
    }

    /** Whether {@code pod} has device-plugin devices, whose health depends on the inventory's UUID mapping. */
    protected static boolean hasDevicePluginDevices(PodAllocation pod) {
        return pod.getContainers().stream().anyMatch(c -> c.getDevicePluginResources().stream().anyMatch(r -> !r.getDeviceIds().isEmpty()));
    }

    protected static String required(String value, String what) {
        if (value == null || value.isEmpty()) {
            throw new InvalidInputException("missing " + what);
        }
        return value;
    }
}
