package io.devhealth.processor.internals.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.processor.internals.StateSerdes;
import io.devhealth.processor.internals.rules.DeviceState;
import io.devhealth.processor.internals.rules.NodeState;
import io.devhealth.processor.internals.rules.SourceReport;
import io.devhealth.processor.internals.stores.CommitHookKeyValueStore;
import io.devhealth.processor.internals.stores.TopologyNames;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.InventoryDevice;
import io.devhealth.schema.avro.NodeDevices;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.PodRef;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.Encoded;
import io.devhealth.schema.serde.EncodedSerde;
import io.devhealth.schema.serde.SchemaRegistries;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class NodeStoreTest {

    private static final String NODE = "n1";
    private static final String SOURCE = "DRA:gpu.nvidia.com";
    private static final String POD = "ml/train-0";
    private static final EncodedSerde<PodDeviceStatus> POD_STATUSES = EncodedSerde.over(
            AvroSerde.of(PodDeviceStatus.class, SchemaRegistries.inMemory("node-store-test-" + UUID.randomUUID())));

    private final MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
    private KeyValueStore<String, StoredNode> nodes;
    private KeyValueStore<String, DeviceState> devices;
    private KeyValueStore<String, Encoded<PodDeviceStatus>> podStatuses;
    private NodeStore store;
    /** What the store told its output of, and what the node store held for {@link #NODE} when it did. */
    private final List<String> told = new ArrayList<>();
    private final CommitHookKeyValueStore.Owner output = new CommitHookKeyValueStore.Owner() {
        @Override
        public void writeBeforeCommit() {
            told.add("commit, node written: " + (nodes.get(NODE) != null));
        }

        @Override
        public void discardUnwritten() {
            told.add("abandoned");
        }
    };
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final StateGauges gauges = new StateGauges(meters);

    @BeforeEach
    void setUp() {
        nodes = add(CommitHookKeyValueStore.builder(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(TopologyNames.NODE_STATE_STORE),
                Serdes.String(), StateSerdes.nodeState())));
        devices = add(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(TopologyNames.DEVICE_STATE_STORE), Serdes.String(),
                StateSerdes.deviceState()));
        add(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(TopologyNames.NODE_ALLOCATIONS_STORE), Serdes.String(),
                Serdes.String()));
        add(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(TopologyNames.NODE_INVENTORY_STORE), Serdes.String(),
                AvroSerde.of(NodeDevices.class, SchemaRegistries.inMemory("node-store-test-" + UUID.randomUUID()))));
        podStatuses = add(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(TopologyNames.NODE_POD_STATUS_STORE), Serdes.String(),
                POD_STATUSES));
        store = new NodeStore(context, gauges.tally(), output);
    }

    private <V> KeyValueStore<String, V> add(StoreBuilder<KeyValueStore<String, V>> builder) {
        KeyValueStore<String, V> built = builder.withLoggingDisabled().build();
        built.init(context.getStateStoreContext(), built);
        context.addStateStore(built);
        return built;
    }

    /** What Kafka Streams does before it commits the task. */
    private void commit() {
        ((CommitHookKeyValueStore<?, ?>) nodes).flushCache();
    }

    private static String key(int device) {
        return NODE + "/gpu.nvidia.com/" + NODE + "/gpu-" + device;
    }

    /** A Healthy device whose only source spoke at {@code observedAt} and was last refreshed at {@code refreshedAt}. */
    private static DeviceState healthy(int device, long observedAt, long refreshedAt) {
        SourceReport source = new SourceReport(SourceKind.DRA, "gpu.nvidia.com", HealthStatus.HEALTHY, null, null, observedAt, refreshedAt,
                30_000L);
        DeviceRef ref = DeviceRef.newBuilder().setDriver("gpu.nvidia.com").setPool(NODE).setDevice("gpu-" + device).build();
        return new DeviceState("c", NODE, ref.getDriver(), ref.getPool(), ref.getDevice(), null, Map.of(SOURCE, source), HealthStatus.HEALTHY,
                null, null, SourceKind.DRA, observedAt, refreshedAt + 30_000L);
    }

    /** The {@code version}th status of pod {@code ml/train-0} on {@link #NODE}. */
    /** A status as the node processor writes it: encoded once, for the topic. */
    private static Encoded<PodDeviceStatus> encoded(int version) {
        return POD_STATUSES.encode("pod-device-status", podStatus(version));
    }

    private static PodDeviceStatus podStatus(int version) {
        return PodDeviceStatus.newBuilder()
                .setPod(new PodRef("ml", "train-0", null))
                .setCluster("c")
                .setNode(NODE)
                .setVersion(version)
                .setUpdatedAt(Instant.ofEpochMilli(1_000L * version))
                .setSummary(HealthStatus.HEALTHY)
                .setContainers(List.of())
                .build();
    }

    private static NodeState node(long time) {
        return NodeState.empty("c").withReport(new NodeState.Watermark(1, time), time);
    }

    @Test
    void shouldWriteANodeOnceAtTheCommitNotOnEveryChange() {
        store.putNode(NODE, node(1));
        store.putNode(NODE, node(2));
        assertThat(nodes.get(NODE)).as("nothing written before the commit").isNull();

        commit();

        assertThat(nodes.get(NODE).state()).isEqualTo(node(2));
        assertThat(store.node(NODE)).isEqualTo(node(2));
    }

    @Test
    void shouldKeepARefreshInTheNodesValueAndTheWrittenDeviceUntouched() {
        store.putNode(NODE, node(1_000));
        store.putDevice(NODE, key(0), healthy(0, 1_000, 1_000));
        store.refresh(NODE, key(0), healthy(0, 1_000, 16_000));
        commit();

        assertThat(devices.get(key(0))).isEqualTo(healthy(0, 1_000, 1_000));
        assertThat(nodes.get(NODE).refreshes()).containsOnlyKeys(key(0));
        assertThat(nodes.get(NODE).device(key(0), devices.get(key(0)))).as("as queries read it").isEqualTo(healthy(0, 1_000, 16_000));
        assertThat(store.device(NODE, key(0))).isEqualTo(healthy(0, 1_000, 16_000));
        assertThat(store.earliestDeadline(NODE)).isEqualTo(46_000L);
    }

    @Test
    void shouldDropTheRefreshOnceTheDeviceIsWrittenWhole() {
        store.putNode(NODE, node(1_000));
        store.putDevice(NODE, key(0), healthy(0, 1_000, 1_000));
        store.refresh(NODE, key(0), healthy(0, 1_000, 16_000));
        commit();

        store.putDevice(NODE, key(0), healthy(0, 20_000, 20_000));
        commit();

        assertThat(nodes.get(NODE).refreshes()).isEmpty();
        assertThat(devices.get(key(0))).isEqualTo(healthy(0, 20_000, 20_000));
    }

    @Test
    void shouldRestoreExactlyWhatItHeldFromTheStores() {
        store.putNode(NODE, node(1_000));
        for (int i = 0; i < 4; i++) {
            store.putDevice(NODE, key(i), healthy(i, 1_000, 1_000));
        }
        store.refresh(NODE, key(1), healthy(1, 1_000, 16_000));
        store.refresh(NODE, key(2), healthy(2, 1_000, 31_000));
        commit();

        NodeStore restored = new NodeStore(context, gauges.tally(), output);

        for (int i = 0; i < 4; i++) {
            assertThat(restored.device(NODE, key(i))).isEqualTo(store.device(NODE, key(i)));
        }
        assertThat(restored.node(NODE)).isEqualTo(store.node(NODE));
        assertThat(restored.earliestDeadline(NODE)).isEqualTo(31_000L);
        // A refresh restored as pending stays in the node's value at the next commit.
        restored.putNode(NODE, node(2_000));
        commit();
        assertThat(nodes.get(NODE).refreshes()).containsOnlyKeys(key(1), key(2));
    }

    @Test
    void shouldTellItsOutputOfEachCommitBeforeWritingTheNodesAndOfEachAbandonedOne() {
        store.putNode(NODE, node(1_000));
        commit();
        store.putNode(NODE, node(2_000));
        ((CommitHookKeyValueStore<?, ?>) nodes).clearCache();

        assertThat(told).containsExactly("commit, node written: false", "abandoned");
        assertThat(nodes.get(NODE).state()).isEqualTo(node(1_000));
    }

    @Test
    void shouldReadTheStoresAgainAfterACommitWasAbandoned() {
        store.putNode(NODE, node(1_000));
        store.putDevice(NODE, key(0), healthy(0, 1_000, 1_000));
        commit();
        store.putNode(NODE, node(5_000));
        store.refresh(NODE, key(0), healthy(0, 1_000, 16_000));

        ((CommitHookKeyValueStore<?, ?>) nodes).clearCache();

        assertThat(store.node(NODE)).as("as committed").isEqualTo(node(1_000));
        assertThat(store.device(NODE, key(0))).isEqualTo(healthy(0, 1_000, 1_000));
    }

    @Test
    void shouldWriteAPodsStatusThroughAndReadTheSameFromTheStoreAfterARestart() {
        store.putNode(NODE, node(1_000));
        store.putPodStatus(NODE, POD, encoded(1));
        store.putPodStatus(NODE, POD, encoded(2));
        commit();

        assertThat(podStatuses.get(NODE + "/" + POD)).isEqualTo(encoded(2));
        assertThat(store.podStatus(NODE, POD)).isEqualTo(podStatus(2));
        assertThat(new NodeStore(context, gauges.tally(), output).podStatus(NODE, POD)).isEqualTo(podStatus(2));
        assertThat(store.podStatus(NODE, "ml/other")).as("never emitted").isNull();
    }

    @Test
    void shouldForgetAReleasedPodsStatusInMemoryAndInTheStore() {
        store.putNode(NODE, node(1_000));
        store.putPodStatus(NODE, POD, encoded(3));

        store.deletePodStatus(NODE, POD);

        assertThat(store.podStatus(NODE, POD)).isNull();
        assertThat(podStatuses.get(NODE + "/" + POD)).isNull();
    }

    @Test
    void shouldReadPodStatusesFromTheStoreAgainAfterACommitWasAbandoned() {
        store.putNode(NODE, node(1_000));
        store.putPodStatus(NODE, POD, encoded(1));
        commit();
        store.putPodStatus(NODE, POD, encoded(2));
        // What Kafka Streams restores after abandoning the commit: the status as committed.
        podStatuses.put(NODE + "/" + POD, encoded(1));

        ((CommitHookKeyValueStore<?, ?>) nodes).clearCache();

        assertThat(store.podStatus(NODE, POD)).as("as committed").isEqualTo(podStatus(1));
    }

    @Test
    void shouldWriteDevicesThroughPastTheMostRefreshesANodeKeeps() {
        store.putNode(NODE, node(1_000));
        int count = NodeStore.MAX_PENDING_REFRESHES + 1;
        for (int i = 0; i < count; i++) {
            store.putDevice(NODE, key(i), healthy(i, 1_000, 1_000));
        }
        for (int i = 0; i < count; i++) {
            store.refresh(NODE, key(i), healthy(i, 1_000, 16_000));
        }
        commit();

        assertThat(nodes.get(NODE).refreshes()).hasSize(NodeStore.MAX_PENDING_REFRESHES).doesNotContainKey(key(count - 1));
        assertThat(devices.get(key(count - 1))).isEqualTo(healthy(count - 1, 1_000, 16_000));
    }

    @Test
    void shouldListDueDevicesEarliestFirstAndOnlyNodesWithOneDue() {
        store.putNode(NODE, node(1_000));
        store.putNode("n2", node(1_000));
        store.putDevice(NODE, key(0), healthy(0, 1_000, 9_000));
        store.putDevice(NODE, key(1), healthy(1, 1_000, 2_000));
        store.putDevice(NODE, key(2), healthy(2, 1_000, 50_000));

        assertThat(store.due(NODE, 40_000L)).containsExactly(key(1), key(0));
        assertThat(store.nodesDue(node -> 40_000L)).containsExactly(NODE);
        assertThat(store.nodesDue(node -> 31_000L)).isEmpty();

        store.deleteDevice(NODE, key(1));
        assertThat(store.earliestDeadline(NODE)).isEqualTo(39_000L);
        assertThat(store.device(NODE, key(1))).isNull();
    }

    /** {@code device} as it is, but of effective health {@code health}. */
    private static DeviceState withHealth(DeviceState device, HealthStatus health) {
        return new DeviceState(device.cluster(), device.node(), device.driver(), device.pool(), device.device(), device.uuid(),
                device.sources(), health, device.message(), device.reason(), device.source(), device.since(), device.deadline());
    }

    /** What devhealth_processor_devices shows for {@link #NODE}, by health label; no entry for a series that is not there. */
    private Map<String, Double> devicesByHealth() {
        Map<String, Double> shown = new TreeMap<>();
        meters.find(StateGauges.DEVICES).tag("node", NODE).gauges()
                .forEach(g -> shown.merge(g.getId().getTag("health"), g.value(), Double::sum));
        return shown;
    }

    @Test
    void shouldCountDevicesByHealthAsTheirStateChangesAndNotForKeepAlives() {
        store.putNode(NODE, node(1_000));
        store.putDevice(NODE, key(0), healthy(0, 1_000, 1_000));
        store.putDevice(NODE, key(1), healthy(1, 1_000, 1_000));
        assertThat(devicesByHealth()).containsExactly(Map.entry("healthy", 2.0));

        store.putDevice(NODE, key(1), withHealth(healthy(1, 2_000, 2_000), HealthStatus.UNHEALTHY));
        store.refresh(NODE, key(0), healthy(0, 1_000, 16_000));
        assertThat(devicesByHealth()).containsExactly(Map.entry("healthy", 1.0), Map.entry("unhealthy", 1.0));
        assertThat(meters.get(StateGauges.DEVICES).tag("health", "unhealthy").gauge().getId().getTags())
                .extracting(t -> t.getKey() + "=" + t.getValue())
                .containsExactlyInAnyOrder("cluster=c", "node=" + NODE, "driver=gpu.nvidia.com", "product=unknown", "health=unhealthy");

        store.deleteDevice(NODE, key(1));
        assertThat(devicesByHealth()).as("a series whose count is zero is removed").containsExactly(Map.entry("healthy", 1.0));
    }

    @Test
    void shouldCountTheProductTheInventoryGivesADevice() {
        store.putNode(NODE, node(1_000));
        store.putDevice(NODE, key(0), healthy(0, 1_000, 1_000));
        store.putInventory(NODE, NodeDevices.newBuilder().setNode(NODE).setObservedAt(Instant.EPOCH)
                .setDevices(List.of(InventoryDevice.newBuilder().setDriver("gpu.nvidia.com")
                        .setPool(NODE).setDevice("gpu-0").setUuid("GPU-0").setProductName("NVIDIA H100").build()))
                .build());

        assertThat(meters.get(StateGauges.DEVICES).tag("node", NODE).gauge().getId().getTag("product")).isEqualTo("NVIDIA H100");
        assertThat(meters.find(StateGauges.DEVICES).tag("product", "unknown").gauges()).isEmpty();
    }

    @Test
    void shouldShowTheSameCountsAfterReadingTheStoresAgainAndNoneAfterClosing() {
        store.putNode(NODE, node(1_000));
        store.putDevice(NODE, key(0), healthy(0, 1_000, 1_000));
        store.putDevice(NODE, key(1), withHealth(healthy(1, 1_000, 1_000), HealthStatus.UNHEALTHY));
        commit();
        store.putDevice(NODE, key(2), healthy(2, 1_000, 1_000));
        store.putNode(NODE, node(3_000));

        ((CommitHookKeyValueStore<?, ?>) nodes).clearCache();
        store.node(NODE); // reads the stores again

        assertThat(devicesByHealth()).as("counted once, as the stores hold them")
                .containsExactly(Map.entry("healthy", 2.0), Map.entry("unhealthy", 1.0));
        assertThat(meters.get(StateGauges.NODE_LAST_RECORD).tag("node", NODE).gauge().value()).isEqualTo(1.0);

        store.close();
        assertThat(devicesByHealth()).isEmpty();
        assertThat(meters.find(StateGauges.NODE_LAST_RECORD).gauges()).isEmpty();
    }

    @Test
    void shouldShowTheNodesOwnTimeOfItsLatestRecord() {
        store.putNode(NODE, node(1_500));
        assertThat(meters.get(StateGauges.NODE_LAST_RECORD).tag("node", NODE).tag("cluster", "c").gauge().value()).isEqualTo(1.5);
        store.putNode(NODE, node(4_000));
        assertThat(meters.get(StateGauges.NODE_LAST_RECORD).tag("node", NODE).gauge().value()).isEqualTo(4.0);
    }
}
