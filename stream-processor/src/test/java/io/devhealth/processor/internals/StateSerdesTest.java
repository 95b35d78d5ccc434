package io.devhealth.processor.internals;

import io.devhealth.processor.internals.fleet.PendingFleetCounts;
import io.devhealth.processor.internals.node.StoredNode;
import io.devhealth.processor.internals.rules.DeviceState;
import io.devhealth.processor.internals.rules.Flaps;
import io.devhealth.processor.internals.rules.NodeState;
import io.devhealth.processor.internals.rules.PendingRefresh;
import io.devhealth.processor.internals.rules.SourceReport;
import io.devhealth.processor.internals.stores.StateKeys;
import io.devhealth.processor.state.FleetCounts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.processor.internals.proto.DeviceStateValue;
import io.devhealth.processor.internals.proto.NodeStateValue;
import io.devhealth.processor.internals.proto.PendingRefreshValue;
import io.devhealth.processor.internals.proto.SourceRefresh;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.avro.SourceStatus;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serde;
import org.junit.jupiter.api.Test;

class StateSerdesTest {

    private final Serde<DeviceState> devices = StateSerdes.deviceState();
    private final Serde<StoredNode> nodes = StateSerdes.nodeState();

    private static DeviceState device() {
        SourceReport dra = new SourceReport(SourceKind.DRA, "gpu.nvidia.com", HealthStatus.UNHEALTHY, "XID 79", "Xid79",
                1_000L, 2_000L, 30_000L);
        SourceReport nvml = new SourceReport(SourceKind.NVML, null, HealthStatus.HEALTHY, null, null, 1_500L, 1_500L, 60_000L);
        return new DeviceState("prod", "node-1", "gpu.nvidia.com", "node-1", "gpu-0", null,
                Map.of(dra.key(), dra, nvml.key(), nvml), HealthStatus.UNHEALTHY, "XID 79", "Xid79", SourceKind.DRA, 1_000L, 32_000L);
    }

    @Test
    void shouldRoundTripDeviceStateIncludingNulls() {
        DeviceState state = device();
        byte[] bytes = devices.serializer().serialize("t", state);
        assertThat(bytes[0]).isEqualTo(StateSerdes.FORMAT_PROTOBUF_V1);
        assertThat(devices.deserializer().deserialize("t", bytes)).isEqualTo(state);
        DeviceState empty = DeviceState.empty(null, "node-1", io.devhealth.schema.avro.DeviceRef.newBuilder()
                .setDriver("").setPool("").setDevice("").setUuid("GPU-1").build());
        assertThat(devices.deserializer().deserialize("t", devices.serializer().serialize("t", empty))).isEqualTo(empty);
    }

    @Test
    void shouldRoundTripNodeState() {
        NodeState state = new NodeState("prod", 42L, new NodeState.Watermark(3, 17), new NodeState.Watermark(3, 2),
                new NodeState.Watermark(3, 9),
                Map.of("gpu.nvidia.com", new NodeState.Liveness(SourceStatus.DOWN, 40L, "stream lost"),
                        "nvml", new NodeState.Liveness(SourceStatus.UP, 1L, null)),
                Map.of("ml/train-0", 41L, "ml/train-1", 0L));
        StoredNode node = new StoredNode(state, Map.of("n1/gpu.nvidia.com/n1/gpu-0", new PendingRefresh("n1/gpu.nvidia.com/n1/gpu-0", 70_000L, Map.of("DRA:gpu.nvidia.com", 40_000L, "NVML:nvml", 39_000L)),
                        "n1/gpu.nvidia.com/n1/gpu-1", new PendingRefresh("n1/gpu.nvidia.com/n1/gpu-1", Long.MAX_VALUE, Map.of())));
        assertThat(nodes.deserializer().deserialize("t", nodes.serializer().serialize("t", node))).isEqualTo(node);
        StoredNode empty = new StoredNode(NodeState.empty(null), Map.of());
        assertThat(nodes.deserializer().deserialize("t", nodes.serializer().serialize("t", empty))).isEqualTo(empty);
    }

    @Test
    void shouldWriteANodeExactlyAsTheGeneratedCodeDoes() throws Exception {
        NodeState state = new NodeState("prod", 42L, new NodeState.Watermark(3, 17), NodeState.Watermark.NONE, new NodeState.Watermark(3, 9),
                Map.of("gpu.nvidia.com", new NodeState.Liveness(SourceStatus.UP, 40L, null)), Map.of("ml/train-0", 41L));
        StoredNode node = new StoredNode(state, Map.of(
                "n1/gpu.nvidia.com/n1/gpu-0", new PendingRefresh("n1/gpu.nvidia.com/n1/gpu-0", 70_000L,
                        Map.of("DRA:gpu.nvidia.com", 40_000L, "NVML:nvml", 0L)),
                "n1/gpu.nvidia.com/n1/gpu-é", new PendingRefresh("n1/gpu.nvidia.com/n1/gpu-é", 0L, Map.of("DRA:gpu.nvidia.com", 1L))));

        byte[] bytes = nodes.serializer().serialize("t", node);

        assertThat(java.util.Arrays.copyOfRange(bytes, 1, bytes.length)).isEqualTo(StateSerdes.encode(node).toByteArray());
    }

    /** A node of 8 GPUs as a collector reports it, every device refreshed by its DRA driver. */
    private static StoredNode eightGpus(String node) {
        Map<String, PendingRefresh> refreshes = new java.util.LinkedHashMap<>();
        for (int gpu = 0; gpu < 8; gpu++) {
            String key = StateKeys.device(node, "gpu.nvidia.com", node, "gpu-" + gpu);
            refreshes.put(key, new PendingRefresh(key, 1_764_410_430_000L + gpu, Map.of("DRA:gpu.nvidia.com", 1_764_410_400_000L + gpu)));
        }
        NodeState state = new NodeState("prod", 1_764_410_400_007L, new NodeState.Watermark(3, 1_234_567), new NodeState.Watermark(3, 2),
                new NodeState.Watermark(3, 9), Map.of("gpu.nvidia.com", new NodeState.Liveness(SourceStatus.UP, 1_764_400_000_000L, null)),
                Map.of());
        return new StoredNode(state, refreshes);
    }

    @Test
    void shouldWriteANodesRefreshesSmall() {
        StoredNode node = eightGpus("ip-10-0-12-34.ec2.internal");

        byte[] bytes = nodes.serializer().serialize("t", node);

        // 272 bytes; with each refresh's whole device key, source key and absolute times this node took 975.
        assertThat(bytes.length).isLessThan(300);
        assertThat(nodes.deserializer().deserialize("t", bytes)).isEqualTo(node);
    }

    @Test
    void shouldRoundTripRefreshesWhateverTheirKeysShare() {
        NodeState state = new NodeState("prod", 50_000L, NodeState.Watermark.NONE, NodeState.Watermark.NONE, NodeState.Watermark.NONE,
                Map.of(), Map.of());
        Map<String, PendingRefresh> refreshes = new java.util.LinkedHashMap<>();
        // In whatever order the value holds them (StoredNode copies its map): keys that share all, some or nothing.
        for (String key : java.util.List.of("n1/uuid:GPU-1", "n1/uuid:GPU-1b", "n1/uuid:GPU", "n1/gpu.nvidia.com/pool-\uD83D\uDE00/gpu-0",
                "n1/gpu.nvidia.com/pool-\uD83D\uDE01/gpu-0", "x", "")) {
            // Times before and after the node's, the farthest a long can reach, and none.
            refreshes.put(key, new PendingRefresh(key, key.isEmpty() ? Long.MIN_VALUE : Long.MAX_VALUE,
                    Map.of("DRA:gpu.nvidia.com", 60_000L, "NVML:nvml", key.length() % 2 == 0 ? 0L : 40_000L)));
        }
        StoredNode node = new StoredNode(state, refreshes);

        assertThat(nodes.deserializer().deserialize("t", nodes.serializer().serialize("t", node))).isEqualTo(node);
    }

    @Test
    void shouldRefuseARefreshThatNamesWhatTheValueDoesNotHave() {
        NodeStateValue sharesTooMuch = NodeStateValue.newBuilder()
                .addRefreshes(PendingRefreshValue.newBuilder().setSharedPrefix(3).setDeviceSuffix("gpu-0")).build();
        NodeStateValue unknownSource = NodeStateValue.newBuilder().addRefreshSources("DRA:gpu.nvidia.com")
                .addRefreshes(PendingRefreshValue.newBuilder().setDeviceSuffix("n1/gpu-0").addSources(SourceRefresh.newBuilder().setSource(1)))
                .build();

        for (NodeStateValue value : java.util.List.of(sharesTooMuch, unknownSource)) {
            byte[] proto = value.toByteArray();
            byte[] bytes = new byte[proto.length + 1];
            bytes[0] = StateSerdes.FORMAT_PROTOBUF_V1;
            System.arraycopy(proto, 0, bytes, 1, proto.length);
            assertThatThrownBy(() -> nodes.deserializer().deserialize("t", bytes))
                    .isInstanceOf(SerializationException.class).hasMessageContaining("cannot read StoredNode")
                    .hasRootCauseMessage(value == sharesTooMuch ? "a refresh shares 3 characters of the previous device key, which has 0"
                            : "a refresh names source 1 of 1");
        }
    }

    @Test
    void shouldRoundTripASourcesFlapsAndItsHold() {
        SourceReport held = new SourceReport(SourceKind.NVML, "nvml", HealthStatus.HEALTHY, null, null, 5_000L, 6_000L, 30_000L,
                new Flaps.Held(4_000L, HealthStatus.UNHEALTHY, "flapping: held", 7, 9_000L));
        SourceReport counting = new SourceReport(SourceKind.DRA, "gpu.nvidia.com", HealthStatus.UNHEALTHY, "XID 79", "Xid79", 5_000L,
                5_000L, 30_000L, new Flaps.Counting(java.util.List.of(1_000L, 3_000L)));
        DeviceState state = new DeviceState("prod", "node-1", "gpu.nvidia.com", "node-1", "gpu-0", null,
                Map.of(held.key(), held, counting.key(), counting), HealthStatus.UNHEALTHY, "flapping: held", Flaps.REASON_FLAPPING,
                SourceKind.NVML, 4_000L, 9_000L);

        assertThat(devices.deserializer().deserialize("t", devices.serializer().serialize("t", state))).isEqualTo(state);
    }

    @Test
    void shouldRoundTripPendingFleetCounts() {
        Serde<PendingFleetCounts> pending = StateSerdes.pendingFleetCounts();
        PendingFleetCounts value = new PendingFleetCounts(new FleetCounts("prod", 2, 1, 5), 1_764_410_400_123L);
        assertThat(pending.deserializer().deserialize("t", pending.serializer().serialize("t", value))).isEqualTo(value);
    }

    @Test
    void shouldRoundTripFleetCounts() {
        Serde<FleetCounts> counts = StateSerdes.fleetCounts();
        FleetCounts value = new FleetCounts("prod", 3, 0, 41);
        assertThat(counts.deserializer().deserialize("t", counts.serializer().serialize("t", value))).isEqualTo(value);
        assertThat(counts.deserializer().deserialize("t", counts.serializer().serialize("t", FleetCounts.empty())))
                .isEqualTo(FleetCounts.empty());
    }

    @Test
    void shouldReadAnUnknownEnumSymbolAsTheDefault() {
        byte[] proto = DeviceStateValue.newBuilder().setHealth("DEGRADED").setSource("FPGA").setDeadline(5L).build().toByteArray();
        byte[] bytes = new byte[proto.length + 1];
        bytes[0] = StateSerdes.FORMAT_PROTOBUF_V1;
        System.arraycopy(proto, 0, bytes, 1, proto.length);
        DeviceState read = devices.deserializer().deserialize("t", bytes);
        assertThat(read.health()).isEqualTo(HealthStatus.UNKNOWN);
        assertThat(read.source()).isEqualTo(SourceKind.OTHER);
        assertThat(read.deadline()).isEqualTo(5L);
    }

    @Test
    void shouldRefuseAFormatItDoesNotKnowWithAClearError() {
        assertThatThrownBy(() -> devices.deserializer().deserialize("t", new byte[] {9, 1, 2}))
                .isInstanceOf(SerializationException.class).hasMessageContaining("unknown DeviceState format 9");
        assertThatThrownBy(() -> nodes.deserializer().deserialize("t", new byte[] {StateSerdes.FORMAT_PROTOBUF_V1, (byte) 0xff}))
                .isInstanceOf(SerializationException.class).hasMessageContaining("cannot read StoredNode");
        assertThatThrownBy(() -> nodes.deserializer().deserialize("t", "".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(SerializationException.class);
    }
}
