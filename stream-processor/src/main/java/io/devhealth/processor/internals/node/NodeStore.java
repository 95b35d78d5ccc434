package io.devhealth.processor.internals.node;

import io.devhealth.processor.internals.rules.DeviceIdentity;
import io.devhealth.processor.internals.rules.DeviceRules;
import io.devhealth.processor.internals.rules.DeviceState;
import io.devhealth.processor.internals.rules.NodeState;
import io.devhealth.processor.internals.rules.PendingRefresh;
import io.devhealth.processor.internals.stores.CommitHookKeyValueStore;
import io.devhealth.processor.internals.stores.StateKeys;
import io.devhealth.processor.internals.stores.TopologyNames;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeDevices;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.serde.Encoded;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToLongFunction;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The state of the nodes of one processor task, with one owner: the {@code node-state},
 * {@code device-state}, {@code node-allocations}, {@code node-inventory} and {@code node-pod-status}
 * stores, what is kept of them decoded in memory, each device's deadline, and the keep-alives not yet
 * written into device states. The processor reads and writes through this alone; the stores stay the only truth
 * (everything here is rebuilt from them when the processor is initialized).
 *
 * <p>Why it keeps so much in memory: every record reads its node's state and one of its devices,
 * every change a node's allocations and inventory, and the expiry punctuator every node's earliest
 * deadline once a second. Decoding them from the stores each time was most of a report's cost. A
 * node's devices sit in a small array (a node has a handful), so finding one is a node look-up and a
 * short scan, and their deadlines are read where the devices are. The last status a node emitted for
 * each of its pods is read before every status it emits (to keep unchanged devices' {@code since} and
 * to emit only what changed): it is kept decoded after its first read or write, so a device's first
 * report, which re-emits the status its pod got from the allocations, does not read back and decode
 * what was written moments before. (They take about as much memory as the allocations kept here:
 * a status has an entry per allocated device, as the allocation has.)
 *
 * <p>Writing, three ways:
 * <ul>
 *   <li>{@link #putDevice} writes a device's state through, now.</li>
 *   <li>{@link #refresh} takes a device state that differs from the current one only in refresh times
 *       and deadline (a keep-alive, {@link DeviceRules.Refreshed}): it is kept as the device's current
 *       state and written, as a {@link PendingRefresh}, in its node's value — up to
 *       {@value #MAX_PENDING_REFRESHES} devices per node, past which a node's value would cost more to
 *       write than the devices it saves, and devices are written through.</li>
 *   <li>{@link #putNode} keeps a node's state; every node changed since the last commit is written once,
 *       just before the commit ({@link CommitHookKeyValueStore}): a node's records come in bursts (a
 *       collector sends all its devices' keep-alives together), and encoding the node on every record
 *       was a fifth of the stream thread's time.</li>
 * </ul>
 *
 * <p>Readers outside the stream thread (interactive queries) read the stores, as of the last commit,
 * through {@link StoredNode#device}: the same rule this class restores with.
 *
 * <p>Every device's effective health, driver and product, and every node's time, are counted into
 * the processor's gauges ({@link StateGauges}) here, where they change: counted again whenever the
 * state is read from the stores, taken back when the task closes ({@link #close}). A keep-alive
 * changes neither, and costs the gauges nothing.
 *
 * <p>Stream thread only; one per processor instance.
 */
public final class NodeStore implements CommitHookKeyValueStore.Owner {

    /** Devices per node whose keep-alives are kept in the node's value: a node of 8 GPUs of 7 MIG slices each, and some. */
    static final int MAX_PENDING_REFRESHES = 64;

    private final KeyValueStore<String, StoredNode> nodeStore;
    private final KeyValueStore<String, DeviceState> deviceStore;
    private final KeyValueStore<String, NodeAllocations> allocationStore;
    private final KeyValueStore<String, NodeDevices> inventoryStore;
    private final KeyValueStore<String, Encoded<PodDeviceStatus>> podStatusStore;
    private final StateGauges.Tally gauges;
    private final CommitHookKeyValueStore.Owner output;
    private final Map<String, Node> nodes = new HashMap<>();
    private final List<Node> changed = new ArrayList<>();
    /** False after a commit was abandoned: memory is then ahead of the stores, and is read from them again. */
    private boolean loaded;

    /**
     * @param output what its owner sends from the nodes' state before each commit (the node processor's
     *               stale pod statuses, which read the devices' states and write pod statuses here): told
     *               of each commit before the nodes' values are written, and of each abandoned one
     */
    public NodeStore(ProcessorContext<?, ?> context, StateGauges.Tally gauges, CommitHookKeyValueStore.Owner output) {
        this.gauges = gauges;
        this.output = output;
        this.nodeStore = context.getStateStore(TopologyNames.NODE_STATE_STORE);
        this.deviceStore = context.getStateStore(TopologyNames.DEVICE_STATE_STORE);
        this.allocationStore = context.getStateStore(TopologyNames.NODE_ALLOCATIONS_STORE);
        this.inventoryStore = context.getStateStore(TopologyNames.NODE_INVENTORY_STORE);
        this.podStatusStore = context.getStateStore(TopologyNames.NODE_POD_STATUS_STORE);
        CommitHookKeyValueStore.attach(nodeStore, this);
        load();
    }

    private void load() {
        gauges.withdraw();
        nodes.clear();
        changed.clear();
        Map<String, StoredNode> stored = new HashMap<>();
        try (KeyValueIterator<String, StoredNode> all = nodeStore.all()) {
            all.forEachRemaining(entry -> {
                stored.put(entry.key, entry.value);
                nodes.put(entry.key, new Node(entry.key, entry.value.state()));
            });
        }
        try (KeyValueIterator<String, DeviceState> all = deviceStore.all()) {
            all.forEachRemaining(entry -> {
                String name = StateKeys.nodeOf(entry.key);
                StoredNode node = stored.get(name);
                Slot slot = nodeOf(name).add(entry.key);
                slot.current = node == null ? entry.value : node.device(entry.key, entry.value);
                slot.refreshPending = node != null && node.refreshes().containsKey(entry.key);
            });
        }
        for (Node node : nodes.values()) {
            node.pending = 0;
            NodeDevices inventory = node.size == 0 ? null : node.inventory.get(inventoryStore, node.name);
            for (int i = 0; i < node.size; i++) {
                node.pending += node.slots[i].refreshPending ? 1 : 0;
                regroup(node.slots[i], inventory);
            }
            node.findEarliest();
            showNodeTime(node);
        }
        loaded = true;
    }

    /** Counts the device in the group its state and {@code inventory} put it in now. */
    private void regroup(Slot slot, NodeDevices inventory) {
        DeviceState device = slot.current;
        StateGauges.DeviceGroup group = new StateGauges.DeviceGroup(device.cluster(), device.node(), device.driver(),
                DeviceIdentity.productOf(inventory, device.ref()), device.health());
        gauges.move(slot.group, group);
        slot.group = group;
    }

    /** Counts the device again when its health changed (its driver and product cannot change with its state). */
    private void regroupOnChange(Node entry, Slot slot) {
        if (slot.group == null || slot.group.health() != slot.current.health()) {
            regroup(slot, entry.inventory.get(inventoryStore, entry.name));
        }
    }

    private void showNodeTime(Node entry) {
        if (entry.state != null && entry.state.nodeTime() > 0) {
            if (entry.shownTime == null) {
                entry.shownTime = gauges.nodeTime(entry.state.cluster(), entry.name);
            }
            entry.shownTime.set(entry.state.nodeTime());
        }
    }

    /** Takes this task's devices and nodes out of the processor's gauges: the task is closing. */
    public void close() {
        gauges.withdraw();
    }

    private void ensureLoaded() {
        if (!loaded) {
            load();
        }
    }

    /** The node's state; null before its first record. */
    public NodeState node(String node) {
        ensureLoaded();
        Node entry = nodes.get(node);
        return entry == null ? null : entry.state;
    }

    /** Makes {@code state} the node's state, written at the next commit. */
    public void putNode(String node, NodeState state) {
        ensureLoaded();
        Node entry = nodeOf(node);
        entry.state = state;
        showNodeTime(entry);
        changed(entry);
    }

    /** Device {@code key} of {@code node} as it is now; null when no source ever reported it. */
    public DeviceState device(String node, String key) {
        ensureLoaded();
        Node entry = nodes.get(node);
        Slot slot = entry == null ? null : entry.find(key);
        return slot == null ? null : slot.current;
    }

    /** Writes the state of device {@code key} of {@code node} whole, now. */
    public void putDevice(String node, String key, DeviceState state) {
        ensureLoaded();
        deviceStore.put(key, state);
        Node entry = nodeOf(node);
        Slot slot = entry.find(key);
        if (slot == null) {
            slot = entry.add(key);
        } else if (slot.refreshPending) {
            slot.refreshPending = false;
            entry.pending--;
            changed(entry); // its value no longer carries the device's refresh
        }
        entry.set(slot, state);
        regroupOnChange(entry, slot);
    }

    /**
     * Makes {@code state} device {@code key}'s current state, where it differs from the current one only in
     * its sources' refresh times and its deadline ({@link DeviceRules.Refreshed}).
     */
    public void refresh(String node, String key, DeviceState state) {
        ensureLoaded();
        Node entry = nodes.get(node);
        Slot slot = entry == null ? null : entry.find(key);
        if (slot == null || !slot.refreshPending && entry.pending >= MAX_PENDING_REFRESHES) {
            putDevice(node, key, state);
            return;
        }
        if (!slot.refreshPending) {
            slot.refreshPending = true;
            entry.pending++;
        }
        entry.set(slot, state);
        regroupOnChange(entry, slot);
        changed(entry);
    }

    /** Deletes device {@code key} of {@code node}. */
    public void deleteDevice(String node, String key) {
        ensureLoaded();
        deviceStore.delete(key);
        Node entry = nodes.get(node);
        Slot slot = entry == null ? null : entry.find(key);
        if (slot != null) {
            gauges.move(slot.group, null);
        }
        if (entry != null && entry.remove(key)) {
            changed(entry);
        }
    }

    /** The keys of {@code node}'s devices that start with {@code prefix}, in key order. */
    public List<String> deviceKeys(String node, String prefix) {
        ensureLoaded();
        Node entry = nodes.get(node);
        if (entry == null) {
            return List.of();
        }
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < entry.size; i++) {
            if (entry.slots[i].key.startsWith(prefix)) {
                keys.add(entry.slots[i].key);
            }
        }
        keys.sort(Comparator.naturalOrder());
        return keys;
    }

    /** The earliest deadline of {@code node}'s devices; {@link Long#MAX_VALUE} when none can change through silence. */
    public long earliestDeadline(String node) {
        ensureLoaded();
        Node entry = nodes.get(node);
        return entry == null ? Long.MAX_VALUE : entry.earliest;
    }

    /** {@code node}'s devices whose deadline is at or before {@code nodeNow}, earliest first (ties by key). */
    public List<String> due(String node, long nodeNow) {
        ensureLoaded();
        Node entry = nodes.get(node);
        if (entry == null || entry.earliest > nodeNow) {
            return List.of();
        }
        List<Slot> due = new ArrayList<>();
        for (int i = 0; i < entry.size; i++) {
            if (entry.slots[i].current.deadline() <= nodeNow) {
                due.add(entry.slots[i]);
            }
        }
        due.sort(Comparator.<Slot>comparingLong(slot -> slot.current.deadline()).thenComparing(slot -> slot.key));
        return due.stream().map(slot -> slot.key).toList();
    }

    /** The nodes with a device due by {@code nodeNow(node)}. */
    public List<String> nodesDue(ToLongFunction<String> nodeNow) {
        ensureLoaded();
        List<String> due = new ArrayList<>();
        for (Node entry : nodes.values()) {
            if (entry.earliest != Long.MAX_VALUE && entry.earliest <= nodeNow.applyAsLong(entry.name)) {
                due.add(entry.name);
            }
        }
        return due;
    }

    /** The node's latest allocation snapshot; null before its first. */
    public NodeAllocations allocations(String node) {
        ensureLoaded();
        Node entry = nodes.get(node);
        if (entry == null) {
            return allocationStore.get(node); // a node known from its allocations alone is not in memory until it has a state
        }
        return entry.allocations.get(allocationStore, node);
    }

    public void putAllocations(String node, NodeAllocations snapshot) {
        ensureLoaded();
        Node entry = nodeOf(node);
        entry.allocations.put(allocationStore, node, snapshot);
        entry.pods = null;
    }

    /** Which pods of the node use which device, for its latest allocation snapshot; null when it has none. */
    public PodIndex pods(String node) {
        NodeAllocations snapshot = allocations(node);
        if (snapshot == null) {
            return null;
        }
        Node entry = nodeOf(node);
        if (entry.pods == null || !entry.pods.isFor(snapshot)) {
            entry.pods = new PodIndex(node, snapshot);
        }
        return entry.pods;
    }

    /** The node's latest inventory; null before its first. */
    public NodeDevices inventory(String node) {
        ensureLoaded();
        Node entry = nodes.get(node);
        if (entry == null) {
            return inventoryStore.get(node);
        }
        return entry.inventory.get(inventoryStore, node);
    }

    public void putInventory(String node, NodeDevices devices) {
        ensureLoaded();
        Node entry = nodeOf(node);
        entry.inventory.put(inventoryStore, node, devices);
        for (int i = 0; i < entry.size; i++) {
            regroup(entry.slots[i], devices); // products come from the inventory
        }
    }

    /** The last status {@code node} emitted for pod {@code podKey} ({@link StateKeys#pod}); null when none, or since it released the pod. */
    public PodDeviceStatus podStatus(String node, String podKey) {
        ensureLoaded();
        Node entry = nodes.get(node);
        String key = StateKeys.nodePod(node, podKey);
        if (entry == null) {
            return decoded(podStatusStore.get(key)); // as allocations(): a node without a state is not kept in memory
        }
        PodDeviceStatus status = entry.podStatuses.get(podKey);
        if (status == null) {
            status = decoded(podStatusStore.get(key));
            if (status != null) {
                entry.podStatuses.put(podKey, status);
            }
        }
        return status;
    }

    private static PodDeviceStatus decoded(Encoded<PodDeviceStatus> stored) {
        return stored == null ? null : stored.value();
    }

    /**
     * Writes {@code status} as the last status {@code node} emitted for pod {@code podKey}, now: its bytes to the
     * store, the decoded status kept in memory.
     */
    public void putPodStatus(String node, String podKey, Encoded<PodDeviceStatus> status) {
        ensureLoaded();
        podStatusStore.put(StateKeys.nodePod(node, podKey), status);
        nodeOf(node).podStatuses.put(podKey, status.value());
    }

    /** Forgets the last status {@code node} emitted for pod {@code podKey}: the node released the pod. */
    public void deletePodStatus(String node, String podKey) {
        ensureLoaded();
        podStatusStore.delete(StateKeys.nodePod(node, podKey));
        Node entry = nodes.get(node);
        if (entry != null) {
            entry.podStatuses.remove(podKey);
        }
    }

    @Override
    public void writeBeforeCommit() {
        output.writeBeforeCommit();
        for (Node entry : changed) {
            entry.changed = false;
            if (entry.state == null) {
                continue; // devices without a node state: written through already, nothing of the node to keep
            }
            Map<String, PendingRefresh> refreshes = new LinkedHashMap<>();
            for (int i = 0; i < entry.size; i++) {
                Slot slot = entry.slots[i];
                if (slot.refreshPending) {
                    refreshes.put(slot.key, PendingRefresh.of(slot.key, slot.current));
                }
            }
            nodeStore.put(entry.name, new StoredNode(entry.state, refreshes));
        }
        changed.clear();
    }

    @Override
    public void discardUnwritten() {
        output.discardUnwritten();
        loaded = false;
        nodes.clear();
        changed.clear();
    }

    private Node nodeOf(String node) {
        Node entry = nodes.get(node);
        if (entry == null) {
            entry = new Node(node, null);
            nodes.put(node, entry);
        }
        return entry;
    }

    private void changed(Node entry) {
        if (!entry.changed) {
            entry.changed = true;
            changed.add(entry);
        }
    }

    /** One node: its state, and its devices with their current states. */
    private static final class Node {
        final String name;
        NodeState state;
        Slot[] slots = new Slot[8];
        int size;
        /** The earliest deadline among the devices. */
        long earliest = Long.MAX_VALUE;
        /** How many devices have a refresh pending. */
        int pending;
        /** Whether the node's value changed since the last commit (it is then in {@link NodeStore#changed}). */
        boolean changed;
        final Kept<NodeAllocations> allocations = new Kept<>();
        final Kept<NodeDevices> inventory = new Kept<>();
        /** The last status the node emitted, by pod ({@link StateKeys#pod}): those read or written since the load; a pod not here is read from the store. */
        final Map<String, PodDeviceStatus> podStatuses = new HashMap<>();
        PodIndex pods;
        /** Where the processor's gauge shows the node's time; null until it has one. */
        AtomicLong shownTime;

        Node(String name, NodeState state) {
            this.name = name;
            this.state = state;
        }

        Slot find(String key) {
            int hash = key.hashCode();
            for (int i = 0; i < size; i++) {
                Slot slot = slots[i];
                if (slot.hash == hash && slot.key.equals(key)) {
                    return slot;
                }
            }
            return null;
        }

        Slot add(String key) {
            if (size == slots.length) {
                slots = Arrays.copyOf(slots, size * 2);
            }
            Slot slot = new Slot(key);
            slots[size++] = slot;
            return slot;
        }

        void set(Slot slot, DeviceState state) {
            long previous = slot.current == null ? Long.MAX_VALUE : slot.current.deadline();
            slot.current = state;
            long deadline = state.deadline();
            if (deadline < earliest) {
                earliest = deadline;
            } else if (previous == earliest && deadline != previous) {
                findEarliest(); // the earliest moved later: find the new one
            }
        }

        /** @return whether the device had a refresh pending, which the node's value then no longer carries */
        boolean remove(String key) {
            for (int i = 0; i < size; i++) {
                if (slots[i].key.equals(key)) {
                    boolean pendingRefresh = slots[i].refreshPending;
                    pending -= pendingRefresh ? 1 : 0;
                    slots[i] = slots[--size];
                    slots[size] = null;
                    findEarliest();
                    return pendingRefresh;
                }
            }
            return false;
        }

        void findEarliest() {
            earliest = Long.MAX_VALUE;
            for (int i = 0; i < size; i++) {
                earliest = Math.min(earliest, slots[i].current.deadline());
            }
        }
    }

    /** A store's value for one key, kept decoded: read from the store the first time it is asked for. */
    private static final class Kept<V> {
        private V value;
        private boolean read;

        V get(KeyValueStore<String, V> store, String key) {
            if (!read) {
                value = store.get(key);
                read = true;
            }
            return value;
        }

        void put(KeyValueStore<String, V> store, String key, V next) {
            store.put(key, next);
            value = next;
            read = true;
        }
    }

    /** One device of a node. */
    private static final class Slot {
        final String key;
        final int hash;
        /** As it is now: as written, or with the keep-alives since applied ({@link #refreshPending}). */
        DeviceState current;
        boolean refreshPending;
        /** Where the device is counted in the processor's gauges; null before it is. */
        StateGauges.DeviceGroup group;

        Slot(String key) {
            this.key = key;
            this.hash = key.hashCode();
        }
    }
}
