package io.devhealth.processor;

import io.devhealth.processor.internals.CloudEventsMirror;
import io.devhealth.processor.internals.NodeProcessor;
import io.devhealth.processor.internals.OutputEncoding;
import io.devhealth.processor.internals.StateSerdes;
import io.devhealth.processor.internals.fleet.FleetCombiner;
import io.devhealth.processor.internals.fleet.FleetCounter;
import io.devhealth.processor.internals.fleet.FleetVerdicts;
import io.devhealth.processor.internals.fleet.FleetWindows;
import io.devhealth.processor.internals.node.StateGauges;
import io.devhealth.processor.internals.pods.PodClaims;
import io.devhealth.processor.internals.pods.VerdictRecorder;
import io.devhealth.processor.internals.stores.CommitHookKeyValueStore;
import io.devhealth.processor.internals.stores.TopologyNames;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.TerminatedPod;
import io.devhealth.schema.serde.Encoded;
import io.devhealth.schema.serde.EncodedSerde;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;

/**
 * The processor's topology, shared by {@code main} and the tests.
 *
 * <p>The input is node-events: everything a node's collector says, keyed by node, in the order the
 * collector accepted it, so every fact about one node meets in one task and its stores with no
 * repartition topic. Outputs are re-keyed by pod (pod-device-status) and by device
 * (health-transitions) on the way out.
 *
 * <p>Stores of the node processor (RocksDB, changelogged): {@value #DEVICE_STATE_STORE} (per device:
 * latest report per source, merged health, deadline), {@value #NODE_STATE_STORE} (per node: its clock,
 * de-duplication watermarks, source liveness), {@value #NODE_ALLOCATIONS_STORE}, {@value #NODE_INVENTORY_STORE}
 * (per node: its latest NodeDevices, which maps GPU UUIDs to DRA devices), {@value #NODE_POD_STATUS_STORE}
 * (last emitted status per node and pod), and {@value #DEVICE_HISTORY_STORE} (every transition per
 * device, for the retention window).
 *
 * <p>A pod is keyed by node only on its way out: any node can name any pod. pod-device-status is read
 * back, by pod, into {@link PodClaims}, which keeps one node's word per pod (the first to claim it,
 * until it releases it) in {@value #POD_STATUS_STORE} (the accepted latest status per pod) and
 * {@value #POD_HISTORY_STORE} (every accepted status per pod, including after the pod ended, for the
 * retention window); pod queries read these two.
 */
public final class DeviceHealthTopology {

    public static final String DEVICE_STATE_STORE = TopologyNames.DEVICE_STATE_STORE;
    public static final String NODE_STATE_STORE = TopologyNames.NODE_STATE_STORE;
    public static final String NODE_ALLOCATIONS_STORE = TopologyNames.NODE_ALLOCATIONS_STORE;
    public static final String NODE_INVENTORY_STORE = TopologyNames.NODE_INVENTORY_STORE;
    public static final String NODE_POD_STATUS_STORE = TopologyNames.NODE_POD_STATUS_STORE;
    public static final String POD_STATUS_STORE = TopologyNames.POD_STATUS_STORE;
    public static final String DEVICE_HISTORY_STORE = TopologyNames.DEVICE_HISTORY_STORE;
    public static final String POD_HISTORY_STORE = TopologyNames.POD_HISTORY_STORE;
    public static final String FLEET_STATS_STORE = TopologyNames.FLEET_STATS_STORE;
    public static final String FLEET_PENDING_STORE = TopologyNames.FLEET_PENDING_STORE;
    public static final String POD_VERDICT_STORE = TopologyNames.POD_VERDICT_STORE;
    public static final String FLEET_VERDICT_STORE = TopologyNames.FLEET_VERDICT_STORE;

    static final String EVENTS_SOURCE = "node-events-source";
    static final String NODE_PROCESSOR = "node-processor";
    public static final String POD_STATUS_SINK = TopologyNames.POD_STATUS_SINK;
    public static final String TRANSITIONS_SINK = TopologyNames.TRANSITIONS_SINK;

    /**
     * How late (in the transitions' own time) a transition may arrive and still count in its fleet
     * window. Nodes' clocks differ, a collector that was cut off replays its spool later, and while
     * the processor catches up after an outage its partitions' event times drift far apart in the
     * repartitioned stream: with a 10-minute grace a catch-up dropped most transitions from the counts
     * (QueryBenchmark saw millions of "expired window" skips). A day costs nothing extra: the
     * windows are kept for the history retention (30 days) anyway.
     */
    public static final Duration FLEET_GRACE = Duration.ofDays(1);

    /** History entries are points in time; the window size only has to be positive. */
    private static final Duration HISTORY_WINDOW = Duration.ofMillis(1);

    private DeviceHealthTopology() {}

    /** The changelog topic Kafka Streams creates for {@code store} of application {@code applicationId}. */
    public static String changelog(String applicationId, String store) {
        return applicationId + "-" + store + "-changelog";
    }

    /**
     * The topics the topology reads besides its own internal ones (repartition and changelog topics,
     * whose records it wrote itself): where bad records come from.
     */
    public static List<String> inputTopics(Topics topics) {
        return List.of(topics.nodeEvents(), topics.healthTransitions(), topics.podVerdicts(), topics.podDeviceStatus());
    }

    /** The topology with default behaviour settings. */
    public static Topology build(Topics topics, ProcessorSerdes serdes) {
        return build(topics, serdes, TopologyOptions.defaults());
    }

    public static Topology build(Topics topics, ProcessorSerdes serdes, TopologyOptions options) {
        StreamsBuilder builder = new StreamsBuilder();
        addTransitionReaders(builder, topics, serdes, options);
        addVerdictReaders(builder, topics, serdes, options);
        // One pod-status serde for the node processor that writes the statuses and the claims that keep them.
        EncodedSerde<PodDeviceStatus> podStatuses = serdes.encodedPodDeviceStatus();
        addPodClaims(builder, topics, podStatuses, options);
        Topology topology = builder.build();
        topology.addSource(EVENTS_SOURCE, Serdes.String().deserializer(), serdes.nodeEvents().deserializer(), topics.nodeEvents());
        // One processor for everything a node says: it all changes the same node's state (see NodeProcessor).
        StateGauges gauges = new StateGauges(options.meters());
        EncodedSerde<HealthTransition> transitions = serdes.encodedHealthTransitions();
        OutputEncoding encoding = new OutputEncoding(podStatuses, topics.podDeviceStatus(), transitions, topics.healthTransitions());
        topology.addProcessor(NODE_PROCESSOR, () -> new NodeProcessor(options, gauges, encoding), EVENTS_SOURCE);

        String[] owner = {NODE_PROCESSOR};
        // No record cache anywhere: the processor keeps its nodes decoded itself (NodeStore). Every
        // record moves its node's state (clock, watermark, pending keep-alives), and a node's records
        // come together (a collector sends all its devices' keep-alives at once): each node is encoded
        // and written once per commit, from the commit hook of its store, which a record cache could
        // only do after encoding it on every record. Device states change once per report each: a
        // cache there only filled up and evicted (measured: a fifth of a keep-alive's cost).
        topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(DEVICE_STATE_STORE),
                Serdes.String(), StateSerdes.deviceState()), owner);
        topology.addStateStore(CommitHookKeyValueStore.builder(Stores.keyValueStoreBuilder(
                Stores.persistentKeyValueStore(NODE_STATE_STORE), Serdes.String(), StateSerdes.nodeState())), owner);
        topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(NODE_ALLOCATIONS_STORE),
                Serdes.String(), serdes.nodeAllocations()), owner);
        topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(NODE_INVENTORY_STORE),
                Serdes.String(), serdes.nodeDevices()), owner);
        topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(NODE_POD_STATUS_STORE),
                Serdes.String(), podStatuses), owner);
        topology.addStateStore(Stores.windowStoreBuilder(
                Stores.persistentWindowStore(DEVICE_HISTORY_STORE, options.historyRetention(), HISTORY_WINDOW, true),
                Serdes.String(), transitions), owner);

        topology.addSink(POD_STATUS_SINK, topics.podDeviceStatus(), Serdes.String().serializer(), podStatuses.serializer(),
                NODE_PROCESSOR);
        topology.addSink(TRANSITIONS_SINK, topics.healthTransitions(), Serdes.String().serializer(), transitions.serializer(),
                NODE_PROCESSOR);
        return topology;
    }

    /** How long fleet windows are kept: the history retention, and at least one window and its grace. */
    private static Duration fleetRetention(TopologyOptions options) {
        return options.historyRetention().compareTo(options.fleetWindow().plus(FLEET_GRACE)) > 0
                ? options.historyRetention() : options.fleetWindow().plus(FLEET_GRACE);
    }

    /**
     * What is computed from the sink's verdicts, read from pod-verdicts (keyed by pod): each pod's verdict
     * for the query API, in the {@value #POD_VERDICT_STORE} store ({@link VerdictRecorder}, which also drops
     * a repeated delivery), and the verdicts counted per node and per product of the pod's devices in
     * tumbling windows of {@link TopologyOptions#fleetWindow()} (by when the verdict became final), keyed
     * {@code DIMENSION:value|VERDICT} in the {@value #FLEET_VERDICT_STORE} store, and re-partitioned by that
     * key so each count is fleet-wide. Verdicts come one per terminated pod: plain counting is cheap enough.
     */
    private static void addVerdictReaders(StreamsBuilder builder, Topics topics, ProcessorSerdes serdes, TopologyOptions options) {
        Duration retention = fleetRetention(options);
        builder.addStateStore(Stores.windowStoreBuilder(
                Stores.persistentWindowStore(POD_VERDICT_STORE, retention, HISTORY_WINDOW, false),
                Serdes.String(), serdes.podVerdicts()));
        KStream<String, TerminatedPod> recorded = builder.stream(topics.podVerdicts(),
                        Consumed.with(Serdes.String(), serdes.podVerdicts()).withName("verdicts-source"))
                .process(() -> new VerdictRecorder(retention), Named.as("verdict-recorder"), POD_VERDICT_STORE);
        if (options.cloudEvents()) {
            // The SIEM feed's CloudEvents carry each pod's verdict too, once: after the recorder dropped repeated deliveries.
            recorded.processValues(CloudEventsMirror::verdicts, Named.as("verdict-cloudevents-mirror"))
                    .to(topics.healthTransitionsCloudEvents(), Produced.with(Serdes.String(), Serdes.ByteArray())
                            .withName("verdict-cloudevents-sink"));
        }
        recorded.flatMap((pod, verdict) -> FleetVerdicts.keys(verdict).stream().map(key -> KeyValue.pair(key, "")).toList(),
                        Named.as("verdict-dimensions"))
                .groupByKey(Grouped.with("fleet-verdicts-by-dimension", Serdes.String(), Serdes.String()))
                .windowedBy(TimeWindows.ofSizeAndGrace(options.fleetWindow(), FLEET_GRACE))
                .count(Named.as("fleet-verdict-counts"), Materialized.<String, Long, WindowStore<Bytes, byte[]>>as(FLEET_VERDICT_STORE)
                        .withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()).withRetention(retention));
    }

    /**
     * The pods' accepted statuses and histories, read back from pod-device-status (keyed by pod; under
     * exactly-once only committed statuses): {@link PodClaims} decides which node's statuses of a pod are
     * kept, in {@value #POD_STATUS_STORE} and {@value #POD_HISTORY_STORE}.
     */
    private static void addPodClaims(StreamsBuilder builder, Topics topics, EncodedSerde<PodDeviceStatus> podStatuses,
                                     TopologyOptions options) {
        // The statuses are kept as they were read: the bytes the node processor wrote, never encoded again here.
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(POD_STATUS_STORE),
                Serdes.String(), podStatuses));
        builder.addStateStore(Stores.windowStoreBuilder(
                Stores.persistentWindowStore(POD_HISTORY_STORE, options.historyRetention(), HISTORY_WINDOW, true),
                Serdes.String(), podStatuses));
        KStream<String, Encoded<PodDeviceStatus>> statuses = builder.stream(topics.podDeviceStatus(),
                Consumed.with(Serdes.String(), podStatuses).withName("pod-status-readback-source"));
        statuses.process(() -> new PodClaims(options.meters()), Named.as("pod-claims"), POD_STATUS_STORE, POD_HISTORY_STORE);
    }

    /**
     * What is computed from the transitions the topology wrote, read back from health-transitions:
     * the optional CloudEvents mirror ({@link TopologyOptions#cloudEvents()}), and fleet analytics:
     * the transitions fanned out to {@code DIMENSION:value} keys and folded per window and flush
     * interval ({@link FleetCombiner}, store {@value #FLEET_PENDING_STORE}), re-partitioned by that
     * key (so each count is fleet-wide, not per node partition), and added up in tumbling windows of
     * {@link TopologyOptions#fleetWindow()} (by the transitions' own time) into the queryable,
     * time-first {@value #FLEET_STATS_STORE} store ({@link FleetCounter},
     * {@link io.devhealth.processor.internals.fleet.FleetWindowKeys}); every update goes to fleet-stats, keyed
     * {@code DIMENSION:value@windowStart}.
     */
    private static void addTransitionReaders(StreamsBuilder builder, Topics topics, ProcessorSerdes serdes, TopologyOptions options) {
        Duration retention = fleetRetention(options);
        KStream<String, HealthTransition> transitions = builder.stream(topics.healthTransitions(),
                Consumed.with(Serdes.String(), serdes.healthTransitions()).withName("transitions-readback-source"));
        if (options.cloudEvents()) {
            // A mirror of the topic (not of the processor's memory): what SIEMs get is exactly what was committed.
            transitions.processValues(CloudEventsMirror::transitions, Named.as("cloudevents-mirror"))
                    .to(topics.healthTransitionsCloudEvents(), Produced.with(Serdes.String(), Serdes.ByteArray())
                            .withName("cloudevents-sink"));
        }
        FleetWindows windows = new FleetWindows(options.fleetWindow(), FLEET_GRACE);
        // No record cache on the pending store: the combiner keeps its values decoded and writes each
        // changed one once per commit, from the store's commit hook.
        builder.addStateStore(CommitHookKeyValueStore.builder(Stores.keyValueStoreBuilder(
                Stores.persistentKeyValueStore(FLEET_PENDING_STORE), Serdes.String(), StateSerdes.pendingFleetCounts())));
        // A record cache on the counts: between two commits the same windows are updated again and
        // again, and the cache folds their changelog records into one per window and commit.
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(FLEET_STATS_STORE),
                Serdes.String(), StateSerdes.fleetCounts()).withCachingEnabled());
        transitions.process(() -> new FleetCombiner(windows, options.fleetFlushInterval(), options.meters()),
                        Named.as("fleet-combiner"), FLEET_PENDING_STORE)
                .repartition(Repartitioned.with(Serdes.String(), StateSerdes.fleetCounts()).withName("fleet-by-dimension"))
                .process(() -> new FleetCounter(windows, retention, options.meters()), Named.as("fleet-counts"), FLEET_STATS_STORE)
                .to(topics.fleetStats(), Produced.with(Serdes.String(), serdes.fleetStats()).withName("fleet-stats-sink"));
    }
}
