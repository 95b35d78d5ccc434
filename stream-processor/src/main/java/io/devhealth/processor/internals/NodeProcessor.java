package io.devhealth.processor.internals;

import io.devhealth.processor.TimeBounds;
import io.devhealth.processor.TopologyOptions;
import io.devhealth.processor.internals.fleet.FleetDimensions;
import io.devhealth.processor.internals.input.InvalidInputException;
import io.devhealth.processor.internals.input.NodeIdentityCheck;
import io.devhealth.processor.internals.node.NodeStore;
import io.devhealth.processor.internals.node.PodIndex;
import io.devhealth.processor.internals.node.SilenceClock;
import io.devhealth.processor.internals.node.StateGauges;
import io.devhealth.processor.internals.pods.DepartedPods;
import io.devhealth.processor.internals.pods.PodClaims;
import io.devhealth.processor.internals.pods.PodStatusBuilder;
import io.devhealth.processor.internals.pods.StalePods;
import io.devhealth.processor.internals.rules.DeviceIdentity;
import io.devhealth.processor.internals.rules.DeviceRules;
import io.devhealth.processor.internals.rules.DeviceState;
import io.devhealth.processor.internals.rules.NodeState;
import io.devhealth.processor.internals.rules.TransitionMessages;
import io.devhealth.processor.internals.stores.CommitHookKeyValueStore;
import io.devhealth.processor.internals.stores.StateKeys;
import io.devhealth.processor.internals.stores.TopologyNames;
import io.devhealth.schema.PodHealth;
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
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.PodRef;
import io.devhealth.schema.avro.Severity;
import io.devhealth.schema.avro.SourceState;
import io.devhealth.schema.serde.Encoded;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.WindowStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies everything a node's collector says — device reports, heartbeats, inventories and
 * allocation snapshots — and expires silent sources.
 *
 * <p>What happens to a device is {@link DeviceRules}'; the nodes' state is {@link NodeStore}'s. This
 * class keeps the rest: dispatch by kind of record, the node's identity ({@link NodeIdentityCheck}),
 * de-duplication by (collector epoch, sequence), and what a change is forwarded as: every change of a
 * device's effective health emits exactly one HealthTransition, is kept in the device's history, and
 * makes the status of every pod using the device stale. A stale status is rebuilt and emitted once,
 * just before the commit, however many of the pod's devices changed ({@link StalePods}), from the
 * commit hook of the node store ({@link CommitHookKeyValueStore.Forwarding}). Output values are pod statuses (null:
 * the node released the pod) and transitions, each encoded once ({@link OutputEncoding}), routed by
 * child name ({@link TopologyNames}).
 *
 * <p>Each node's pod statuses are its own view, kept by node and pod: whether the query API shows a
 * node's view of a pod is {@link PodClaims}' decision, made on what was emitted here.
 *
 * <p>Silence is judged on the node's own clock ({@link SilenceClock}): from the records of the node as
 * they are processed (stream time, so a replayed backlog expires exactly what was silent then), and
 * by a wall-clock punctuator that extrapolates the node's clock while it is quiet, so that a device
 * whose source stopped talking turns Unknown within about a second of its deadline.
 *
 * <p>Identity: a report known only by GPU UUID (NVML) is applied, as one more source, to every DRA
 * device the node's inventory gives that UUID, so the merge weighs it against the DRA driver's own
 * word. While the inventory does not know the UUID yet the report is kept under the UUID
 * ({@link StateKeys#uuid}); when an inventory that knows it arrives, those sources move onto the DRA
 * devices ({@link DeviceRules#remap}).
 *
 * <p>One processor takes everything a node's collector says (node-events) because it all changes the
 * same node's state: inventories change device identities, allocations decide which pods a change
 * reaches. Owning every store alone, it can keep the node's decoded state in memory.
 */
public final class NodeProcessor implements Processor<String, Object, String, Object> {

    private static final Logger LOGGER = LoggerFactory.getLogger(NodeProcessor.class);

    /** Tag {@code kind} of {@code devhealth.processor.duplicates}: device reports and heartbeats. */
    static final String DUPLICATE_REPORTS = "reports";
    /** Tag {@code kind} of {@code devhealth.processor.duplicates}: allocation snapshots. */
    static final String DUPLICATE_ALLOCATIONS = "allocations";
    /** Tag {@code kind} of {@code devhealth.processor.duplicates}: inventories. */
    static final String DUPLICATE_INVENTORY = "inventory";

    private final TopologyOptions options;
    private final StateGauges gauges;
    private final OutputEncoding encoding;
    private TransitionCounters transitionCounters;
    private final Map<String, Counter> duplicates = new HashMap<>();
    /** Expiries judged at a record's node time ({@link #expireDue} from a record). */
    private Counter expiredAtNodeTime;
    /** Expiries judged at the node time the silence clock estimates on a wall-clock tick. */
    private Counter expiredOnTick;
    private ProcessorContext<String, Object> context;
    private NodeStore store;
    private WindowStore<String, Encoded<HealthTransition>> deviceHistory;
    private SilenceClock clock;
    private NodeIdentityCheck identity;
    private final StalePods stalePods = new StalePods();
    private CommitHookKeyValueStore.Forwarding atCommit;

    /**
     * @param gauges the processor instance's gauges, shared by every task's processor
     * @param encoding how pod statuses and transitions are encoded, once each, for their topics and stores
     */
    public NodeProcessor(TopologyOptions options, StateGauges gauges, OutputEncoding encoding) {
        this.options = options;
        this.gauges = gauges;
        this.encoding = encoding;
    }

    @Override
    public void init(ProcessorContext<String, Object> context) {
        this.context = context;
        this.atCommit = new CommitHookKeyValueStore.Forwarding(context);
        this.store = new NodeStore(context, gauges.tally(), new CommitHookKeyValueStore.Owner() {
            @Override
            public void writeBeforeCommit() {
                emitStalePods();
            }

            @Override
            public void discardUnwritten() {
                stalePods.clear();
            }
        });
        this.deviceHistory = context.getStateStore(TopologyNames.DEVICE_HISTORY_STORE);
        transitionCounters = new TransitionCounters(options.meters());
        // By the kind of record, as the node's watermarks are kept (NodeState): not by topic, since
        // node-events carries all kinds.
        for (String kind : List.of(DUPLICATE_REPORTS, DUPLICATE_ALLOCATIONS, DUPLICATE_INVENTORY)) {
            duplicates.put(kind, Counter.builder("devhealth.processor.duplicates")
                    .description("Records dropped because their (collector epoch, sequence) was already applied")
                    .tag("kind", kind)
                    .register(options.meters()));
        }
        expiredAtNodeTime = expiryCounter(options.meters(), "record");
        expiredOnTick = expiryCounter(options.meters(), "tick");
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
        TimeBounds bounds = options.timeBounds();
        long now = context.currentSystemTimeMs();
        if (payload instanceof DeviceHealthReport report) {
            identity.check(node, report.getNode(), record.headers());
            bounds.check(node, "report", report.getObservedAt(), record.timestamp(), report.getCollectorEpoch(), now);
            onReport(node, report, record.timestamp());
        } else if (payload instanceof NodeHeartbeat heartbeat) {
            identity.check(node, heartbeat.getNode(), record.headers());
            bounds.check(node, "heartbeat", heartbeat.getObservedAt(), record.timestamp(), heartbeat.getCollectorEpoch(), now);
            onHeartbeat(node, heartbeat);
        } else if (payload instanceof NodeAllocations snapshot) {
            identity.check(node, snapshot.getNode(), record.headers());
            bounds.check(node, "allocations", snapshot.getObservedAt(), record.timestamp(), snapshot.getCollectorEpoch(), now);
            onAllocations(node, snapshot, record.timestamp());
        } else if (payload instanceof NodeDevices devices) {
            identity.check(node, devices.getNode(), record.headers());
            bounds.check(node, "inventory", devices.getObservedAt(), record.timestamp(), devices.getCollectorEpoch(), now);
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
        List<InventoryDevice> mapped = DeviceIdentity.uuidOnly(ref) ? DeviceIdentity.devicesWithUuid(store.inventory(node), ref.getUuid())
                : List.of();
        if (mapped.isEmpty()) {
            // A DRA device, or a UUID the inventory does not know (yet): kept under the UUID.
            String key = StateKeys.device(node, ref);
            DeviceState current = store.device(node, key);
            apply(node, key, current != null ? current : DeviceState.empty(state.cluster(), node,
                    DeviceIdentity.uuidOnly(ref) ? ref : withInventoryUuid(store.inventory(node), ref)), report, observedAt, timeoutMs, state, false);
            return;
        }
        for (InventoryDevice device : mapped) {
            String key = StateKeys.device(node, device.getDriver(), device.getPool(), device.getDevice());
            DeviceState current = store.device(node, key);
            apply(node, key, current != null ? current : DeviceState.empty(state.cluster(), node, DeviceIdentity.ref(device)),
                    report, observedAt, timeoutMs, state, mapped.size() > 1);
        }
    }

    /**
     * Applies one report to one device ({@code current}: as it is now, or an empty state for a device seen
     * for the first time). {@code oneOfSeveral}: the report reaches several devices (a GPU UUID whose MIG
     * slices the inventory lists), so each transition's id names its device.
     */
    private void apply(String node, String key, DeviceState current, DeviceHealthReport report, long observedAt, long timeoutMs,
                       NodeState state, boolean oneOfSeveral) {
        DeviceRules.Outcome outcome = DeviceRules.apply(current, report, observedAt, timeoutMs, state,
                options.flapDamping().limitsFor(report.getSourceName()));
        if (outcome instanceof DeviceRules.Refreshed refreshed) {
            store.refresh(node, key, refreshed.next());
        } else if (outcome instanceof DeviceRules.Changed changed) {
            // The id is built only here: most reports (keep-alives) never need one.
            commit(node, key, current, changed.next(), observedAt,
                    () -> oneOfSeveral ? recordTransitionId(key) + "#" + key : recordTransitionId(key));
        }
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
        store.putNode(node, next);
        store.putInventory(node, devices);
        long nodeNow = next.nodeTime();
        // Silence before the inventory arrived is judged first, under the identity the device had then.
        expireDue(node, nodeNow);
        for (String orphanKey : store.deviceKeys(node, StateKeys.uuidPrefix(node))) {
            DeviceState orphan = store.device(node, orphanKey);
            List<InventoryDevice> mapped = DeviceIdentity.devicesWithUuid(devices, orphan.uuid());
            if (mapped.isEmpty()) {
                continue;
            }
            for (InventoryDevice device : mapped) {
                String key = StateKeys.device(node, device.getDriver(), device.getPool(), device.getDevice());
                DeviceState target = store.device(node, key);
                if (target == null) {
                    target = DeviceState.empty(next.cluster(), node, DeviceIdentity.ref(device));
                }
                commit(node, key, target, DeviceRules.remap(target, orphan, nodeNow), nodeNow, () -> recordTransitionId(key) + "#" + key);
            }
            store.deleteDevice(node, orphanKey);
            LOGGER.info("uuid mapped to DRA devices node={} uuid={} devices={}", node, orphan.uuid(), mapped.size());
        }
        // Device-plugin ids read their health through the mapping, which may just have changed.
        markStale(node, NodeProcessor::hasDevicePluginDevices, timestamp, null);
    }

    /** Keeps the node's latest allocation snapshot and marks the status of its pods stale (emitted if they appear or change). */
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
        // The statuses still to emit were made with the allocations this snapshot replaces, and a pod it
        // releases must have its last status before its release.
        emitStalePods(node);
        DepartedPods.Kept kept = DepartedPods.after(store.allocations(node), snapshot, state.departed(),
                options.terminationWindow().toMillis());
        store.putNode(node, state.withAllocations(state.allocations().advance(snapshot.getCollectorEpoch(), snapshot.getSequence()),
                kept.departed()));
        store.putAllocations(node, kept.allocations());
        // Pods that left the node keep their last status, and for the termination window their devices'
        // changes too (DepartedPods); then the last status is the post-mortem record.
        markStale(node, pod -> true, timestamp, null);
        for (String pod : kept.released()) {
            release(node, pod, timestamp);
        }
    }

    /**
     * The node gives the pod up: it forgets what it emitted for it and says so with a tombstone for the
     * pod, naming itself in the {@value NodeIdentityCheck#NODE_HEADER} header (a tombstone has no value to
     * name it), so that another node may claim the pod ({@link PodClaims}). The pod's accepted record and
     * history stay where the claims keep them.
     */
    private void release(String node, String pod, long timestamp) {
        if (store.podStatus(node, pod) == null) {
            return;
        }
        store.deletePodStatus(node, pod);
        Headers headers = new RecordHeaders();
        headers.add(NodeIdentityCheck.NODE_HEADER, node.getBytes(StandardCharsets.UTF_8));
        context.forward(new Record<>(pod, null, timestamp, headers), TopologyNames.POD_STATUS_SINK);
        LOGGER.debug("pod released node={} pod={}", node, pod);
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
        store.putNode(node, state.withSources(sources));
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
        store.putNode(node, next);
        clock.recordSeen(node, context.currentSystemTimeMs(), context.currentStreamTimeMs());
        return next;
    }

    /** Wall-clock tick: expire the devices of every quiet node whose estimated time passed a deadline. */
    private void expireSilentDevices(long wallNow) {
        if (!clock.tick(wallNow)) {
            return;
        }
        for (String node : store.nodesDue(node -> nodeNow(node, wallNow))) {
            expireDue(node, nodeNow(node, wallNow), expiredOnTick);
        }
    }

    private long nodeNow(String node, long wallNow) {
        NodeState state = store.node(node);
        return clock.nodeNow(node, state == null ? 0L : state.nodeTime(), wallNow);
    }

    /**
     * Device deadlines applied, by what judged them: a record of the node carrying a time past them
     * ({@code record}), or the wall-clock tick's estimate of the node's time ({@code tick}). Which one
     * expires a device tells a node's own silence (both can) from a processor behind its input (only the
     * tick's estimate can be wrong).
     */
    private static Counter expiryCounter(MeterRegistry meters, String judgedBy) {
        return Counter.builder("devhealth.processor.silence.expiries").tag("judged.by", judgedBy)
                .description("Device deadlines applied (a source silent past its timeout, a flap hold's end), by what judged "
                        + "them: a record's node time or the wall-clock tick's estimate of it")
                .register(meters);
    }

    private void expireDue(String node, long nodeNow) {
        expireDue(node, nodeNow, expiredAtNodeTime);
    }

    /** Applies every deadline of {@code node}'s devices up to {@code nodeNow}, in order, each at its own time. */
    private void expireDue(String node, long nodeNow, Counter judgedBy) {
        if (store.earliestDeadline(node) > nodeNow) {
            return;
        }
        for (String key : store.due(node, nodeNow)) {
            DeviceState current = store.device(node, key);
            for (DeviceRules.Expiry expiry : DeviceRules.expire(current, nodeNow)) {
                judgedBy.increment();
                commit(node, key, current, expiry.next(), expiry.at(), () -> "silence:" + key + "@" + expiry.at());
                current = expiry.next();
            }
        }
    }

    /** Stores the device's new state; emits a transition, and marks the pods' statuses stale, when what pods see changed. */
    private void commit(String node, String key, DeviceState previous, DeviceState next, long at, Supplier<String> transitionId) {
        boolean isTransition = DeviceRules.isTransition(previous, next);
        boolean podsSeeIt = isTransition || !Objects.equals(previous.message(), next.message())
                || !Objects.equals(previous.reason(), next.reason());
        List<PodAllocation> using = podsSeeIt ? podsUsing(node, next) : List.of();
        if (podsSeeIt) {
            emitPodsStaleFrom(node, key, using);
        }
        store.putDevice(node, key, next);
        if (isTransition) {
            List<PodRef> affected = using.stream()
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
                    .setMessage(TransitionMessages.describe(previous, next))
                    .setAffectedPods(affected)
                    .setAt(Instant.ofEpochMilli(at))
                    .setSeverity(severity(next.health()))
                    .build();
            Encoded<HealthTransition> encoded = encoding.transition(transition);
            deviceHistory.put(key, encoded, at);
            context.forward(new Record<>(key, encoded, at, transitionHeaders(node, next)), TopologyNames.TRANSITIONS_SINK);
            transitionCounters.count(previous.health(), next.health(), next.reason());
            LOGGER.info("health transition node={} device={} from={} to={} reason={} pods={}", node, key, previous.health(),
                    next.health(), next.reason(), affected.size());
        }
        if (podsSeeIt) {
            markStale(node, using, at, key);
        }
    }

    /** The device's product name for fleet analytics ({@link FleetDimensions}), when the inventory knows it. */
    private Headers transitionHeaders(String node, DeviceState device) {
        Headers headers = new RecordHeaders();
        String product = DeviceIdentity.productOf(store.inventory(node), device.ref());
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

    /** The node's state before this record ({@link NodeState#empty} before its first), under the cluster name the record gives. */
    private NodeState node(String node, String cluster) {
        NodeState state = store.node(node);
        return (state == null ? NodeState.empty(cluster) : state).withCluster(cluster);
    }

    /** @param kind {@link #DUPLICATE_REPORTS}, {@link #DUPLICATE_ALLOCATIONS} or {@link #DUPLICATE_INVENTORY} */
    private void countDuplicate(String kind) {
        duplicates.get(kind).increment();
    }

    /** Marks the status of every pod on {@code node} that {@code affected} selects stale, as {@link StalePods#mark} does. */
    private void markStale(String node, Predicate<PodAllocation> affected, long timestamp, String device) {
        NodeAllocations nodeAllocations = store.allocations(node);
        if (nodeAllocations != null) {
            markStale(node, nodeAllocations.getPods().stream().filter(affected).toList(), timestamp, device);
        }
    }

    /**
     * Marks the status of {@code pods}, pods of {@code node}'s current allocations, to be rebuilt and
     * emitted (when changed) before the next commit ({@link StalePods#mark}: {@code device} is the state
     * key of the device whose change reached them, null for a change of the node's allocations or
     * inventory). A pod that left the node is marked only while its devices' changes still reach it
     * ({@link DepartedPods#reaches}), judged now.
     */
    private void markStale(String node, List<PodAllocation> pods, long timestamp, String device) {
        if (pods.isEmpty() || store.allocations(node) == null) {
            return;
        }
        NodeState state = store.node(node);
        Map<String, Long> departed = state == null ? Map.of() : state.departed();
        for (PodAllocation pod : pods) {
            String key = StateKeys.pod(pod.getNamespace(), pod.getName());
            if (departed.containsKey(key) && !DepartedPods.reaches(departed, key, state.nodeTime(), options.terminationWindow().toMillis())) {
                continue;
            }
            stalePods.mark(node, pod, timestamp, device);
        }
    }

    /** Before a commit: emits every stale pod status, as if processing, so that it goes out in the committing transaction. */
    private void emitStalePods() {
        if (!stalePods.isEmpty()) {
            atCommit.run(context.currentStreamTimeMs(), () -> stalePods.nodes().forEach(this::emitStalePods));
        }
    }

    /**
     * Emits now the status of each of {@code pods} that is stale from an earlier change of {@code device},
     * which is about to change again: the pod's history then shows the device's state in between.
     */
    private void emitPodsStaleFrom(String node, String device, List<PodAllocation> pods) {
        for (PodAllocation pod : pods) {
            String key = StateKeys.pod(pod.getNamespace(), pod.getName());
            StalePods.Stale stale = stalePods.takeIfChangedBy(node, key, device);
            if (stale != null) {
                emitStatus(node, key, stale);
            }
        }
    }

    /** Emits (when changed) the status of each of {@code node}'s stale pods. */
    private void emitStalePods(String node) {
        stalePods.take(node).forEach((key, stale) -> emitStatus(node, key, stale));
    }

    /**
     * Rebuilds a stale pod's status from its devices as they are now, and emits it when it changed, with
     * the time of the latest change that reached the pod.
     */
    private void emitStatus(String node, String key, StalePods.Stale stale) {
        NodeState state = store.node(node);
        boolean departed = state != null && state.departed().containsKey(key);
        PodDeviceStatus previous = store.podStatus(node, key);
        PodDeviceStatus next = PodStatusBuilder.build(store.allocations(node).getCluster(), node, stale.pod(),
                deviceKey -> store.device(node, deviceKey), id -> deviceById(node, id), store.inventory(node), previous,
                Instant.ofEpochMilli(stale.at()));
        if (departed) {
            next = PodStatusBuilder.afterDeparture(previous, next);
        }
        // A pod that never showed a device (only device-plugin devices no source knows) gets no status at
        // all: nothing is known, so the sink writes no condition and the query API answers "no status".
        if (previous == null && !PodHealth.hasDevices(next)) {
            return;
        }
        if (PodStatusBuilder.differs(previous, next)) {
            Encoded<PodDeviceStatus> encoded = encoding.podStatus(next);
            store.putPodStatus(node, key, encoded);
            context.forward(new Record<>(key, encoded, stale.at()), TopologyNames.POD_STATUS_SINK);
        }
    }

    /**
     * The state a device-plugin device id (a GPU UUID) reads its health from: the DRA device(s) the
     * inventory maps it to (the worst of them when several: MIG slices of one GPU), else the state
     * kept under the UUID itself; null when no source ever reported the device.
     */
    private DeviceState deviceById(String node, String id) {
        List<InventoryDevice> mapped = DeviceIdentity.devicesWithUuid(store.inventory(node), id);
        DeviceState worst = null;
        for (InventoryDevice device : mapped) {
            DeviceState state = store.device(node, StateKeys.device(node, device.getDriver(), device.getPool(), device.getDevice()));
            if (state != null && (worst == null || PodHealth.worse(worst.health(), state.health()) != worst.health())) {
                worst = state;
            }
        }
        return worst != null ? worst : store.device(node, StateKeys.uuid(node, id));
    }

    /**
     * The pods on {@code node} using {@code device}, in the allocation snapshot's order: as a DRA claim
     * device, or as a device-plugin device id equal to its UUID (its own, or the one the inventory maps
     * its DRA identity to).
     */
    private List<PodAllocation> podsUsing(String node, DeviceState device) {
        PodIndex index = store.pods(node);
        if (index == null) {
            return List.of();
        }
        boolean dra = !device.driver().isEmpty();
        String uuid = device.uuid() != null ? device.uuid()
                : dra ? DeviceIdentity.uuidOf(store.inventory(node), device.driver(), device.pool(), device.device()) : null;
        return index.podsUsing(dra ? StateKeys.device(node, device.driver(), device.pool(), device.device()) : null, uuid);
    }

    /** Whether {@code pod} has device-plugin devices, whose health depends on the inventory's UUID mapping. */
    private static boolean hasDevicePluginDevices(PodAllocation pod) {
        return pod.getContainers().stream().anyMatch(c -> c.getDevicePluginResources().stream().anyMatch(r -> !r.getDeviceIds().isEmpty()));
    }

    /** The task is closing: its nodes are no longer this instance's to show. */
    @Override
    public void close() {
        if (store != null) {
            store.close();
        }
    }

    private static String required(String value, String what) {
        if (value == null || value.isEmpty()) {
            throw new InvalidInputException("missing " + what);
        }
        return value;
    }
}
