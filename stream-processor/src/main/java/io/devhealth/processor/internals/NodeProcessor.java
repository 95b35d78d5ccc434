package io.devhealth.processor.internals;

import io.devhealth.processor.DeviceHealthTopology;
import io.devhealth.processor.TopologyOptions;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.InventoryDevice;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeDevices;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.avro.NodeHeartbeat;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.avro.PodRef;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.Severity;
import io.devhealth.schema.avro.SourceState;
import io.micrometer.core.instrument.Counter;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies everything a node's collector says — device reports, heartbeats, inventories and
 * allocation snapshots — and expires silent sources.
 *
 * <p>Per device it keeps the latest report of every source and merges them
 * ({@link DeviceHealthMerger}); every change of the merged health emits exactly one
 * HealthTransition, is kept in the device's history, and re-emits the status of every pod using the
 * device. Silence is judged on the node's own clock ({@link SilenceClock}): from the records of the
 * node as they are processed (stream time, so a replayed backlog expires exactly what was silent
 * then), and by a wall-clock punctuator that extrapolates the node's clock while it is quiet, so
 * that a device whose source stopped talking turns Unknown within about a second of its deadline.
 *
 * <p>Identity (DESIGN §2): a report known only by GPU UUID (NVML) is applied, as one more source, to
 * every DRA device the node's inventory gives that UUID, so the merge weighs it against the DRA
 * driver's own word. While the inventory does not know the UUID yet the report is kept under the
 * UUID ({@link StateKeys#uuid}); when an inventory that knows it arrives, those sources move onto
 * the DRA devices.
 *
 * <p>One processor takes everything a node's collector says (node-events) because it all changes
 * the same node's state (inventories change device identities and so deadlines; allocations decide
 * which pods a change reaches): owning every store alone, it can keep the node's decoded state in memory
 * ({@link DecodedCache}, {@link DeadlineIndex}, {@link PodIndex}) without another processor writing behind its back.
 */
public final class NodeProcessor extends NodeStateProcessor<Object> {

    private static final Logger LOGGER = LoggerFactory.getLogger(NodeProcessor.class);
    private static final StringSerializer KEYS = new StringSerializer();
    /** Devices per node whose keep-alives are kept in the node's state (PendingRefresh): a node of 8 GPUs of 7 MIG slices each. */
    static final int MAX_PENDING_REFRESHES = 64;

    private final DeadlineIndex deadlines = new DeadlineIndex();
    private final Map<HealthStatus, Counter> transitionCounters = new EnumMap<>(HealthStatus.class);
    private SilenceClock clock;
    private NodeIdentityCheck identity;

    public NodeProcessor(TopologyOptions options) {
        super(options);
    }

    @Override
    public void init(ProcessorContext<String, Object> context) {
        super.init(context);
        deadlines.clear();
        deviceState.forEach((key, stored) -> {
            String node = StateKeys.nodeOf(key);
            deadlines.update(node, key, current(node, key, stored).deadline());
        });
        for (HealthStatus to : HealthStatus.values()) {
            transitionCounters.put(to, Counter.builder("devhealth.processor.transitions")
                    .description("Changes of a device's effective health").tag("to", to.name()).register(options.meters()));
        }
        identity = new NodeIdentityCheck(options.enforcePrincipals(), options.meters(), "node-events");
        clock = new SilenceClock(options.restoreGrace().toMillis(), options.stallThreshold().toMillis());
        clock.start(context.currentSystemTimeMs());
        context.schedule(options.expiryInterval(), PunctuationType.WALL_CLOCK_TIME, this::expireSilentDevices);
    }

    @Override
    public void process(Record<String, Object> record) {
        String node = required(record.key(), "record key (node name)");
        if (!(record.value() instanceof NodeEvent event)) {
            throw new InvalidInputException(context.recordMetadata().map(m -> m.topic()).orElse("input")
                    + " record without value for node " + node);
        }
        Object payload = event.getPayload();
        if (payload instanceof DeviceHealthReport report) {
            identity.check(node, report.getNode(), record.headers());
            onReport(node, report, record.timestamp());
        } else if (payload instanceof NodeHeartbeat heartbeat) {
            identity.check(node, heartbeat.getNode(), record.headers());
            onHeartbeat(node, heartbeat);
        } else if (payload instanceof NodeAllocations snapshot) {
            identity.check(node, snapshot.getNode(), record.headers());
            onAllocations(node, snapshot, record.timestamp());
        } else if (payload instanceof NodeDevices devices) {
            identity.check(node, devices.getNode(), record.headers());
            onInventory(node, devices, record.timestamp());
        } else {
            throw new InvalidInputException("record without payload for node " + node);
        }
    }

    private void onReport(String node, DeviceHealthReport report, long timestamp) {
        DeviceRef ref = report.getDevice();
        if (ref == null || (ref.getDriver().isEmpty() || ref.getDevice().isEmpty()) && (ref.getUuid() == null || ref.getUuid().isEmpty())) {
            throw new InvalidInputException("report without device identity (driver/pool/device or uuid) from node " + node);
        }
        long observedAt = observedAt(report.getObservedAt(), node);
        NodeState state = admit(node, report.getCluster(), report.getCollectorEpoch(), report.getSequence(), observedAt);
        if (state == null) {
            return;
        }
        // Devices that went silent before this report are expired first, at their own deadlines.
        expireDue(node, state.nodeTime());

        long timeoutMs = options.timeouts().timeoutMs(report.getSourceName(), report.getTimeoutSeconds());
        if (!DeviceIdentity.uuidOnly(ref)) {
            String key = StateKeys.device(node, ref);
            // A device that had a keep-alive since it was written is found through its node's refreshes.
            PendingRefresh pending = state.refreshes().get(key);
            DeviceState stored = pending != null && pending.stored() != null ? pending.stored() : deviceState.get(key);
            if (stored != null && keptAlive(node, key, stored, pending, report, observedAt, timeoutMs, state)) {
                return;
            }
            apply(node, key, stored != null ? current(node, key, stored)
                    : DeviceState.empty(state.cluster(), node, withInventoryUuid(inventory.get(node), ref)),
                    report, observedAt, timeoutMs, state, false);
            return;
        }
        List<InventoryDevice> mapped = DeviceIdentity.devicesWithUuid(inventory.get(node), ref.getUuid());
        if (mapped.isEmpty()) {
            String key = StateKeys.device(node, ref);
            DeviceState previous = device(node, key);
            apply(node, key, previous != null ? previous : DeviceState.empty(state.cluster(), node, ref), report, observedAt, timeoutMs,
                    state, false);
        } else {
            for (InventoryDevice device : mapped) {
                String key = StateKeys.device(node, device.getDriver(), device.getPool(), device.getDevice());
                DeviceState previous = device(node, key);
                apply(node, key, previous != null ? previous : DeviceState.empty(state.cluster(), node, DeviceIdentity.ref(device)),
                        report, observedAt, timeoutMs, state, mapped.size() > 1);
            }
        }
    }

    /**
     * Applies {@code report} through {@link KeepAlivePath} when it is a keep-alive that only moves its
     * device's refresh time (most reports): the device's pending refresh is changed in place, nothing
     * else is built.
     *
     * @param stored the device's state as stored
     * @param pending its pending refresh, or null
     * @return whether the report was applied; if not, {@link #apply} applies it
     */
    private boolean keptAlive(String node, String key, DeviceState stored, PendingRefresh pending, DeviceHealthReport report,
                              long observedAt, long timeoutMs, NodeState state) {
        Map<String, PendingRefresh> refreshes = state.refreshes();
        long refreshedAt = KeepAlivePath.refreshedAt(stored, pending, report, observedAt, timeoutMs, state);
        if (refreshedAt == KeepAlivePath.UNCHANGED) {
            return true;
        }
        if (refreshedAt == KeepAlivePath.GENERAL) {
            return false;
        }
        long deadline = SourceReport.staleAt(refreshedAt, timeoutMs);
        if (pending == null) {
            if (refreshes.size() >= MAX_PENDING_REFRESHES) {
                return false; // the general path writes the device whole
            }
            pending = new PendingRefresh(key, deadline, stored.onlySource().getKey(), refreshedAt).stored(stored);
            refreshes.put(key, pending);
        } else {
            pending.refresh(0, refreshedAt, deadline); // KeepAlivePath took it only with this one source
            if (pending.stored() != stored) {
                pending.stored(stored);
            }
        }
        touchNode(node);
        // The refresh's own key: the index keeps the instance it was last given, so the next keep-alive compares by identity.
        deadlines.update(node, pending.device(), deadline);
        return true;
    }

    /**
     * Applies one report to one device's state ({@code previous}: an empty one for a device seen for the
     * first time). {@code oneOfSeveral}: the report reaches several devices (a GPU UUID whose MIG
     * slices the inventory lists), so each transition's id names its device.
     */
    private void apply(String node, String key, DeviceState previous, DeviceHealthReport report, long observedAt, long timeoutMs,
                       NodeState state, boolean oneOfSeveral) {
        SourceReport known = previous.source(report.getSource(), report.getSourceName());
        if (known != null && observedAt < known.observedAt()) {
            LOGGER.debug("report older than the source's latest ignored node={} device={} observedAt={}", node, key, observedAt);
            return;
        }
        SourceReport next = SourceReport.after(report, known, observedAt, timeoutMs, state.isDown(report.getSourceName()));
        DeviceState merged = previous.withSourceMerged(next, state.nodeTime(), observedAt);
        if (merged.equals(previous)) {
            return; // e.g. a keep-alive from a source the node says is down
        }
        if (previous.becomesWithRefresh(merged) && keepRefresh(node, key, merged)) {
            return;
        }
        // The id is built only here: most reports (keep-alives) never need one.
        commit(node, key, previous, merged, observedAt, () -> oneOfSeveral ? recordTransitionId(key) + "#" + key : recordTransitionId(key));
    }

    /**
     * A change that only moved refresh times (keep-alives) is kept in the node's state, which is written
     * at the commit anyway, instead of writing the device's whole state (PendingRefresh). Up to
     * {@value #MAX_PENDING_REFRESHES} devices per node: past that the node's own value would grow
     * costlier to write than the devices it saves.
     *
     * @return whether it was kept; if not, the caller writes the device's state
     */
    private boolean keepRefresh(String node, String key, DeviceState state) {
        Map<String, PendingRefresh> refreshes = storedNode(node).refreshes();
        PendingRefresh pending = refreshes.get(key);
        if (pending == null && refreshes.size() >= MAX_PENDING_REFRESHES) {
            return false;
        }
        if (pending == null || !pending.refresh(state)) {
            refreshes.put(key, PendingRefresh.of(key, state).stored(deviceState.get(key)));
        }
        touchNode(node);
        deadlines.update(node, key, state.deadline());
        return true;
    }

    /** {@code ref} (a DRA device: driver, pool and device set) with the UUID the node's inventory gives it, if it had none. */
    private static DeviceRef withInventoryUuid(NodeDevices nodeInventory, DeviceRef ref) {
        String uuid = DeviceIdentity.uuidOf(nodeInventory, ref.getDriver(), ref.getPool(), ref.getDevice());
        return uuid == null || ref.getUuid() != null ? ref : DeviceRef.newBuilder(ref).setUuid(uuid).build();
    }

    /**
     * Keeps the node's latest inventory and moves the sources of every UUID-only device it now knows
     * onto the DRA devices with that UUID (exactly as if those reports had arrived after the inventory).
     *
     * <p>An inventory at or below the node's inventory watermark (collector epoch, sequence) is a
     * duplicate or stale — a spool replay after an outage, a producer retry, an old record sent again —
     * and is dropped: applying it would overwrite a newer inventory and map UUIDs to devices the node no
     * longer has.
     */
    private void onInventory(String node, NodeDevices devices, long timestamp) {
        for (InventoryDevice device : devices.getDevices()) {
            required(device.getDriver(), "inventory device driver");
            required(device.getDevice(), "inventory device name");
        }
        NodeState stored = storedNode(node);
        NodeState current = node(node, devices.getCluster());
        long epoch = devices.getCollectorEpoch();
        long sequence = devices.getSequence();
        if (!current.inventory().admits(epoch, sequence)) {
            countDuplicate(DUPLICATE_INVENTORY);
            LOGGER.debug("duplicate or stale inventory dropped node={} epoch={} sequence={} watermarkEpoch={} watermarkSequence={}",
                    node, epoch, sequence, current.inventory().epoch(), current.inventory().sequence());
            return;
        }
        NodeState next = current.withInventory(current.inventory().advance(epoch, sequence));
        putNode(node, next);
        inventory.put(node, devices);
        // A node known from this inventory alone has no device states yet: nothing to expire or re-map.
        if (stored != null) {
            NodeState state = next;
            long nodeNow = state.nodeTime();
            // Silence before the inventory arrived is judged first, under the identity the device had then.
            expireDue(node, nodeNow);
            for (KeyValue<String, DeviceState> uuidOnly : deviceState.prefixScan(StateKeys.uuidPrefix(node), KEYS)) {
                KeyValue<String, DeviceState> orphan = KeyValue.pair(uuidOnly.key, current(node, uuidOnly.key, uuidOnly.value));
                List<InventoryDevice> mapped = DeviceIdentity.devicesWithUuid(devices, orphan.value.uuid());
                if (mapped.isEmpty()) {
                    continue;
                }
                for (InventoryDevice device : mapped) {
                    String key = StateKeys.device(node, device.getDriver(), device.getPool(), device.getDevice());
                    DeviceState previous = device(node, key);
                    if (previous == null) {
                        previous = DeviceState.empty(state.cluster(), node, DeviceIdentity.ref(device));
                    }
                    DeviceState merged = previous;
                    for (SourceReport source : orphan.value.sources().values()) {
                        SourceReport known = merged.sources().get(source.key());
                        if (known == null || known.observedAt() <= source.observedAt()) {
                            merged = merged.withSource(source);
                        }
                    }
                    commit(node, key, previous, merged.withEffective(DeviceHealthMerger.merge(merged.sources().values(), nodeNow), nodeNow),
                            nodeNow, () -> recordTransitionId(key) + "#" + key);
                }
                deleteDevice(node, orphan.key);
                LOGGER.info("uuid mapped to DRA devices node={} uuid={} devices={}", node, orphan.value.uuid(), mapped.size());
            }
        }
        // Device-plugin ids read their health through the mapping, which may just have changed.
        refreshPods(node, NodeStateProcessor::hasDevicePluginDevices, timestamp);
    }

    /** Keeps the node's latest allocation snapshot and emits the status of pods that appear or change. */
    private void onAllocations(String node, NodeAllocations snapshot, long timestamp) {
        for (PodAllocation pod : snapshot.getPods()) {
            required(pod.getNamespace(), "pod namespace");
            required(pod.getName(), "pod name");
        }
        NodeState state = node(node, snapshot.getCluster());
        if (!state.allocations().admits(snapshot.getCollectorEpoch(), snapshot.getSequence())) {
            countDuplicate(DUPLICATE_ALLOCATIONS);
            LOGGER.debug("duplicate allocations dropped node={} epoch={} sequence={}", node, snapshot.getCollectorEpoch(),
                    snapshot.getSequence());
            return;
        }
        putNode(node, state.withAllocations(state.allocations().advance(snapshot.getCollectorEpoch(), snapshot.getSequence())));
        allocations.put(node, snapshot);
        // Pods that left the node keep their last status: it is the post-mortem record.
        refreshPods(node, pod -> true, timestamp);
    }

    private void onHeartbeat(String node, NodeHeartbeat heartbeat) {
        long observedAt = observedAt(heartbeat.getObservedAt(), node);
        NodeState state = admit(node, heartbeat.getCluster(), heartbeat.getCollectorEpoch(), heartbeat.getSequence(), observedAt);
        if (state == null) {
            return;
        }
        Map<String, NodeState.Liveness> sources = new TreeMap<>();
        for (SourceState source : heartbeat.getSources()) {
            sources.put(source.getSourceName(), new NodeState.Liveness(source.getState(),
                    source.getSince() == null ? observedAt : source.getSince().toEpochMilli(), source.getMessage()));
        }
        putNode(node, state.withSources(sources));
        expireDue(node, state.nodeTime());
    }

    private static long observedAt(Instant observedAt, String node) {
        if (observedAt == null || observedAt.toEpochMilli() <= 0) {
            throw new InvalidInputException("record without observedAt from node " + node);
        }
        return observedAt.toEpochMilli();
    }

    /**
     * De-duplicates by (collector epoch, sequence) and advances the node's clock.
     *
     * @return the node's state after this record, or null when the record was already applied
     */
    private NodeState admit(String node, String cluster, long epoch, long sequence, long observedAt) {
        NodeState state = node(node, cluster);
        if (!state.reports().admits(epoch, sequence)) {
            countDuplicate(DUPLICATE_REPORTS);
            LOGGER.debug("duplicate report dropped node={} epoch={} sequence={}", node, epoch, sequence);
            return null;
        }
        NodeState next = state.withReport(state.reports().advance(epoch, sequence), observedAt);
        putNode(node, next);
        clock.recordSeen(node, context.currentSystemTimeMs());
        return next;
    }

    /** Wall-clock tick: expire the devices of every quiet node whose estimated time passed a deadline. */
    private void expireSilentDevices(long wallNow) {
        if (!clock.tick(wallNow)) {
            return;
        }
        for (String node : deadlines.nodesDue(node -> nodeNow(node, wallNow))) {
            expireDue(node, nodeNow(node, wallNow));
        }
    }

    private long nodeNow(String node, long wallNow) {
        NodeState state = storedNode(node);
        return clock.nodeNow(node, state == null ? 0L : state.nodeTime(), wallNow);
    }

    /** Applies every deadline of {@code node}'s devices up to {@code nodeNow}, in order, each at its own time. */
    private void expireDue(String node, long nodeNow) {
        if (deadlines.earliest(node) > nodeNow) {
            return;
        }
        for (String key : deadlines.due(node, nodeNow)) {
            DeviceState current = device(node, key);
            if (current == null) {
                // Deleted since indexed (a UUID-only device moved onto its DRA devices).
                deadlines.remove(node, key);
                continue;
            }
            boolean expired = false;
            while (current.deadline() <= nodeNow) {
                long at = current.deadline();
                DeviceState next = current.withEffective(DeviceHealthMerger.merge(current.sources().values(), at), at);
                commit(node, key, current, next, at, () -> "silence:" + key + "@" + at);
                current = next;
                expired = true;
            }
            if (!expired) {
                // Indexed earlier than it is (only if the index and the state disagree): index it at its own deadline.
                deadlines.update(node, key, current.deadline());
            }
        }
    }

    /** Stores the device's new state; emits a transition and pod statuses when what pods see changed. */
    private void commit(String node, String key, DeviceState previous, DeviceState next, long at, Supplier<String> transitionId) {
        putDevice(node, key, next);
        deadlines.update(node, key, next.deadline());
        boolean healthChanged = previous.health() != next.health();
        if (healthChanged) {
            List<PodRef> affected = podsUsing(node, next).stream()
                    .map(pod -> new PodRef(pod.getNamespace(), pod.getName(), null)).toList();
            HealthTransition transition = HealthTransition.newBuilder()
                    .setId(transitionId.get())
                    .setCluster(next.cluster())
                    .setNode(node)
                    .setDevice(next.ref())
                    .setFrom(previous.health())
                    .setTo(next.health())
                    .setSource(next.source())
                    .setReason(next.reason())
                    .setMessage(TransitionMessages.describe(next))
                    .setAffectedPods(affected)
                    .setAt(Instant.ofEpochMilli(at))
                    .setSeverity(severity(next.health()))
                    .build();
            deviceHistory.put(key, transition, at);
            context.forward(new Record<>(key, transition, at, transitionHeaders(node, next)), DeviceHealthTopology.TRANSITIONS_SINK);
            transitionCounters.get(next.health()).increment();
            LOGGER.info("health transition node={} device={} from={} to={} reason={} pods={}", node, key, previous.health(),
                    next.health(), next.reason(), affected.size());
        }
        if (healthChanged || !Objects.equals(previous.message(), next.message()) || !Objects.equals(previous.reason(), next.reason())) {
            refreshPods(node, podsUsing(node, next), at);
        }
    }

    /** The device's product name for fleet analytics ({@link FleetDimensions}), when the inventory knows it. */
    private Headers transitionHeaders(String node, DeviceState device) {
        Headers headers = new RecordHeaders();
        String product = DeviceIdentity.productOf(inventory.get(node), device.ref());
        if (product != null && !product.isEmpty()) {
            headers.add(FleetDimensions.PRODUCT_HEADER, product.getBytes(StandardCharsets.UTF_8));
        }
        return headers;
    }

    /** Derived from the input record's coordinates: stable when exactly-once processing replays it. */
    private String recordTransitionId(String deviceKey) {
        return context.recordMetadata()
                .map(m -> m.topic() + "-" + m.partition() + "-" + m.offset())
                .orElseGet(() -> "report:" + deviceKey + "@" + context.currentStreamTimeMs());
    }

    static Severity severity(HealthStatus to) {
        return switch (to) {
            case UNHEALTHY -> Severity.CRITICAL;
            case UNKNOWN -> Severity.WARNING;
            case HEALTHY -> Severity.INFO;
        };
    }
}
