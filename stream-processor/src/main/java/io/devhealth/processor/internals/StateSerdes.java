package io.devhealth.processor.internals;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.WireFormat;
import io.devhealth.processor.internals.fleet.FleetCombiner;
import io.devhealth.processor.internals.fleet.PendingFleetCounts;
import io.devhealth.processor.internals.node.NodeStore;
import io.devhealth.processor.internals.node.StoredNode;
import io.devhealth.processor.internals.proto.CountingFlaps;
import io.devhealth.processor.internals.proto.DeviceStateValue;
import io.devhealth.processor.internals.proto.FlapsValue;
import io.devhealth.processor.internals.proto.FleetCountsValue;
import io.devhealth.processor.internals.proto.HeldFlaps;
import io.devhealth.processor.internals.proto.Liveness;
import io.devhealth.processor.internals.proto.NodeStateValue;
import io.devhealth.processor.internals.proto.PendingFleetCountsValue;
import io.devhealth.processor.internals.proto.PendingRefreshValue;
import io.devhealth.processor.internals.proto.SourceRefresh;
import io.devhealth.processor.internals.proto.SourceReportState;
import io.devhealth.processor.internals.proto.Watermark;
import io.devhealth.processor.internals.rules.DeviceState;
import io.devhealth.processor.internals.rules.Flaps;
import io.devhealth.processor.internals.rules.NodeState;
import io.devhealth.processor.internals.rules.PendingRefresh;
import io.devhealth.processor.internals.rules.SourceReport;
import io.devhealth.processor.state.FleetCounts;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.avro.SourceStatus;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Serdes of the {@code device-state}, {@code node-state}, {@code fleet-pending} and {@code fleet-stats}
 * stores (and of the fleet-by-dimension repartition): one format byte, then the protobuf message of {@code processor_state.proto}.
 *
 * <p>A device's value is written on every change of it, and a node's once per commit for every node
 * that had a record ({@link NodeStore}), so their format is on the hot path: JSON cost more than the
 * rest of a keep-alive's work.
 */
public final class StateSerdes {

    /** The first byte of every value in this format; bump with an incompatible change (and keep reading the old one). */
    static final byte FORMAT_PROTOBUF_V1 = 1;

    private StateSerdes() {}

    public static Serde<DeviceState> deviceState() {
        return serde(DeviceState.class, state -> write(encode(state)),
                bytes -> decode(DeviceStateValue.parser().parseFrom(bytes, 1, bytes.length - 1)));
    }

    public static Serde<StoredNode> nodeState() {
        return serde(StoredNode.class, StateSerdes::write,
                bytes -> decode(NodeStateValue.parser().parseFrom(bytes, 1, bytes.length - 1)));
    }

    public static Serde<FleetCounts> fleetCounts() {
        return serde(FleetCounts.class, counts -> write(encode(counts)),
                bytes -> decode(FleetCountsValue.parser().parseFrom(bytes, 1, bytes.length - 1)));
    }

    /** The {@code fleet-pending} store's values: what {@link FleetCombiner} has read and not yet sent on. */
    public static Serde<PendingFleetCounts> pendingFleetCounts() {
        return serde(PendingFleetCounts.class,
                pending -> write(PendingFleetCountsValue.newBuilder().setCounts(encode(pending.counts())).setLatestMs(pending.latestMs()).build()),
                bytes -> {
                    PendingFleetCountsValue v = PendingFleetCountsValue.parser().parseFrom(bytes, 1, bytes.length - 1);
                    return new PendingFleetCounts(decode(v.getCounts()), v.getLatestMs());
                });
    }

    static FleetCountsValue encode(FleetCounts counts) {
        FleetCountsValue.Builder b = FleetCountsValue.newBuilder().setToUnhealthy(counts.toUnhealthy()).setToUnknown(counts.toUnknown())
                .setToHealthy(counts.toHealthy());
        if (counts.cluster() != null) b.setCluster(counts.cluster());
        return b.build();
    }

    static FleetCounts decode(FleetCountsValue v) {
        return new FleetCounts(v.hasCluster() ? v.getCluster() : "", v.getToUnhealthy(), v.getToUnknown(), v.getToHealthy());
    }

    /**
     * The format byte, then the node's {@link NodeStateValue}: its own fields through the generated
     * code, its refreshes written field by field, exactly as the generated code writes them (fields in
     * number order, proto3 defaults left out, the departed pods and the refreshes' source table after the
     * refreshes; {@code StateSerdesTest} compares the two). Every node that had a record is written at
     * every commit, with a refresh for each of its devices that had a keep-alive, and building a message
     * per refresh and source was most of writing a node. The refreshes are written small
     * ({@link RefreshKeys}): what a commit writes is mostly these values.
     */
    private static byte[] write(StoredNode node) throws IOException {
        long nodeTime = node.state().nodeTime();
        NodeStateValue head = encode(new StoredNode(node.state(), Map.of())).toBuilder().clearDeparted().build();
        PendingRefresh[] refreshes = node.refreshes().values().toArray(new PendingRefresh[0]);
        RefreshKeys keys = new RefreshKeys();
        int[] shared = new int[refreshes.length];
        String[] suffixes = new String[refreshes.length];
        int[] sizes = new int[refreshes.length];
        int size = 1 + head.getSerializedSize();
        for (int i = 0; i < refreshes.length; i++) {
            shared[i] = keys.shared(refreshes[i].device());
            suffixes[i] = refreshes[i].device().substring(shared[i]);
            sizes[i] = refreshSize(refreshes[i], shared[i], suffixes[i], nodeTime, keys);
            size += nestedSize(NodeStateValue.REFRESHES_FIELD_NUMBER, sizes[i]);
        }
        NodeStateValue tail = NodeStateValue.newBuilder().putAllDeparted(node.state().departed())
                .addAllRefreshSources(keys.sources()).build();
        size += tail.getSerializedSize();
        byte[] bytes = new byte[size];
        bytes[0] = FORMAT_PROTOBUF_V1;
        CodedOutputStream out = CodedOutputStream.newInstance(bytes, 1, bytes.length - 1);
        head.writeTo(out);
        for (int i = 0; i < refreshes.length; i++) {
            PendingRefresh refresh = refreshes[i];
            out.writeTag(NodeStateValue.REFRESHES_FIELD_NUMBER, WireFormat.WIRETYPE_LENGTH_DELIMITED);
            out.writeUInt32NoTag(sizes[i]);
            for (Map.Entry<String, Long> source : refresh.refreshedAt().entrySet()) {
                int index = keys.source(source.getKey());
                long before = nodeTime - source.getValue();
                out.writeTag(PendingRefreshValue.SOURCES_FIELD_NUMBER, WireFormat.WIRETYPE_LENGTH_DELIMITED);
                out.writeUInt32NoTag(sourceSize(index, before));
                if (index != 0) out.writeUInt32(SourceRefresh.SOURCE_FIELD_NUMBER, index);
                if (before != 0L) out.writeSInt64(SourceRefresh.REFRESHED_BEFORE_NODE_TIME_FIELD_NUMBER, before);
            }
            if (shared[i] != 0) out.writeUInt32(PendingRefreshValue.SHARED_PREFIX_FIELD_NUMBER, shared[i]);
            if (!suffixes[i].isEmpty()) out.writeString(PendingRefreshValue.DEVICE_SUFFIX_FIELD_NUMBER, suffixes[i]);
            long deadline = refresh.deadline() - nodeTime;
            if (deadline != 0L) out.writeSInt64(PendingRefreshValue.DEADLINE_AFTER_NODE_TIME_FIELD_NUMBER, deadline);
        }
        tail.writeTo(out);
        out.checkNoSpaceLeft();
        return bytes;
    }

    /** Also numbers the refresh's sources in {@code keys}, in the order the generated code meets them. */
    private static int refreshSize(PendingRefresh refresh, int shared, String suffix, long nodeTime, RefreshKeys keys) {
        int size = 0;
        for (Map.Entry<String, Long> source : refresh.refreshedAt().entrySet()) {
            size += nestedSize(PendingRefreshValue.SOURCES_FIELD_NUMBER, sourceSize(keys.source(source.getKey()), nodeTime - source.getValue()));
        }
        long deadline = refresh.deadline() - nodeTime;
        return size
                + (shared == 0 ? 0 : CodedOutputStream.computeUInt32Size(PendingRefreshValue.SHARED_PREFIX_FIELD_NUMBER, shared))
                + (suffix.isEmpty() ? 0 : CodedOutputStream.computeStringSize(PendingRefreshValue.DEVICE_SUFFIX_FIELD_NUMBER, suffix))
                + (deadline == 0L ? 0 : CodedOutputStream.computeSInt64Size(PendingRefreshValue.DEADLINE_AFTER_NODE_TIME_FIELD_NUMBER, deadline));
    }

    private static int sourceSize(int index, long before) {
        return (index == 0 ? 0 : CodedOutputStream.computeUInt32Size(SourceRefresh.SOURCE_FIELD_NUMBER, index))
                + (before == 0L ? 0 : CodedOutputStream.computeSInt64Size(SourceRefresh.REFRESHED_BEFORE_NODE_TIME_FIELD_NUMBER, before));
    }

    private static int nestedSize(int field, int size) {
        return CodedOutputStream.computeTagSize(field) + CodedOutputStream.computeUInt32SizeNoTag(size) + size;
    }

    /** The format byte, then {@code message}. */
    private static byte[] write(MessageLite message) throws IOException {
        byte[] bytes = new byte[1 + message.getSerializedSize()];
        bytes[0] = FORMAT_PROTOBUF_V1;
        CodedOutputStream out = CodedOutputStream.newInstance(bytes, 1, bytes.length - 1);
        message.writeTo(out);
        out.checkNoSpaceLeft();
        return bytes;
    }

    /** Writes a value with its format byte. */
    private interface Writer<T> {
        byte[] write(T value) throws IOException;
    }

    /** Reads a value past its format byte. */
    private interface Parser<T> {
        T parse(byte[] bytes) throws InvalidProtocolBufferException;
    }

    private static <T> Serde<T> serde(Class<T> type, Writer<T> writer, Parser<T> parser) {
        Serializer<T> serializer = (topic, value) -> {
            if (value == null) {
                return null;
            }
            try {
                return writer.write(value);
            } catch (IOException e) {
                throw new SerializationException("cannot write " + type.getSimpleName(), e);
            }
        };
        Deserializer<T> deserializer = (topic, bytes) -> {
            if (bytes == null) {
                return null;
            }
            if (bytes.length == 0) {
                throw new SerializationException("empty " + type.getSimpleName() + " value");
            }
            if (bytes[0] != FORMAT_PROTOBUF_V1) {
                throw new SerializationException("unknown " + type.getSimpleName() + " format " + bytes[0]
                        + " (written by a newer processor?)");
            }
            try {
                return parser.parse(bytes);
            } catch (InvalidProtocolBufferException e) {
                throw new SerializationException("cannot read " + type.getSimpleName(), e);
            }
        };
        return Serdes.serdeFrom(serializer, deserializer);
    }

    static DeviceStateValue encode(DeviceState state) {
        DeviceStateValue.Builder b = DeviceStateValue.newBuilder()
                .setHealth(symbolName(state.health()))
                .setSource(symbolName(state.source()))
                .setSince(state.since())
                .setDeadline(state.deadline());
        if (state.cluster() != null) b.setCluster(state.cluster());
        if (state.node() != null) b.setNode(state.node());
        if (state.driver() != null) b.setDriver(state.driver());
        if (state.pool() != null) b.setPool(state.pool());
        if (state.device() != null) b.setDevice(state.device());
        if (state.uuid() != null) b.setUuid(state.uuid());
        if (state.message() != null) b.setMessage(state.message());
        if (state.reason() != null) b.setReason(state.reason());
        for (SourceReport source : state.sources().values()) {
            SourceReportState.Builder s = SourceReportState.newBuilder()
                    .setKind(symbolName(source.kind()))
                    .setHealth(symbolName(source.health()))
                    .setObservedAt(source.observedAt())
                    .setRefreshedAt(source.refreshedAt())
                    .setTimeoutMs(source.timeoutMs());
            if (source.name() != null) s.setName(source.name());
            if (source.message() != null) s.setMessage(source.message());
            if (source.reason() != null) s.setReason(source.reason());
            if (source.flaps() != null) s.setFlaps(encode(source.flaps()));
            b.addSources(s);
        }
        return b.build();
    }

    static DeviceState decode(DeviceStateValue v) {
        Map<String, SourceReport> sources = new TreeMap<>();
        for (SourceReportState s : v.getSourcesList()) {
            SourceReport source = new SourceReport(symbol(SourceKind.values(), s.getKind(), SourceKind.OTHER),
                    s.hasName() ? s.getName() : null, symbol(HealthStatus.values(), s.getHealth(), HealthStatus.UNKNOWN),
                    s.hasMessage() ? s.getMessage() : null, s.hasReason() ? s.getReason() : null,
                    s.getObservedAt(), s.getRefreshedAt(), s.getTimeoutMs(), s.hasFlaps() ? decode(s.getFlaps()) : null);
            sources.put(source.key(), source);
        }
        return new DeviceState(v.hasCluster() ? v.getCluster() : null, v.hasNode() ? v.getNode() : null,
                v.hasDriver() ? v.getDriver() : null, v.hasPool() ? v.getPool() : null, v.hasDevice() ? v.getDevice() : null,
                v.hasUuid() ? v.getUuid() : null, sources, symbol(HealthStatus.values(), v.getHealth(), HealthStatus.UNKNOWN),
                v.hasMessage() ? v.getMessage() : null, v.hasReason() ? v.getReason() : null,
                symbol(SourceKind.values(), v.getSource(), SourceKind.OTHER), v.getSince(), v.getDeadline());
    }

    static FlapsValue encode(Flaps flaps) {
        // Java 17: no pattern matching in switch; Flaps is sealed, so these two cases are all.
        if (flaps instanceof Flaps.Held held) {
            return FlapsValue.newBuilder()
                    .setHeld(HeldFlaps.newBuilder().setSince(held.since()).setHealth(symbolName(held.health()))
                            .setMessage(held.message()).setFlips(held.flips()).setReleaseAt(held.releaseAt()))
                    .build();
        }
        return FlapsValue.newBuilder().setCounting(CountingFlaps.newBuilder().addAllRecent(((Flaps.Counting) flaps).recent())).build();
    }

    static Flaps decode(FlapsValue v) {
        return switch (v.getStateCase()) {
            case COUNTING -> new Flaps.Counting(v.getCounting().getRecentList());
            case HELD -> new Flaps.Held(v.getHeld().getSince(), symbol(HealthStatus.values(), v.getHeld().getHealth(), HealthStatus.UNKNOWN),
                    v.getHeld().getMessage(), v.getHeld().getFlips(), v.getHeld().getReleaseAt());
            // A newer processor's kind of damping this one does not know: counting afresh loses no health, only the window so far.
            case STATE_NOT_SET -> null;
        };
    }

    static NodeStateValue encode(StoredNode node) {
        NodeState state = node.state();
        NodeStateValue.Builder b = NodeStateValue.newBuilder()
                .setNodeTime(state.nodeTime())
                .setReports(watermark(state.reports()))
                .setAllocations(watermark(state.allocations()))
                .setInventory(watermark(state.inventory()));
        if (state.cluster() != null) b.setCluster(state.cluster());
        b.putAllDeparted(state.departed());
        state.sources().forEach((name, liveness) -> {
            Liveness.Builder l = Liveness.newBuilder().setSourceName(name).setStatus(symbolName(liveness.status())).setSince(liveness.since());
            if (liveness.message() != null) l.setMessage(liveness.message());
            b.addSources(l);
        });
        long nodeTime = state.nodeTime();
        RefreshKeys keys = new RefreshKeys();
        for (PendingRefresh refresh : node.refreshes().values()) {
            int shared = keys.shared(refresh.device());
            PendingRefreshValue.Builder r = PendingRefreshValue.newBuilder().setSharedPrefix(shared)
                    .setDeviceSuffix(refresh.device().substring(shared)).setDeadlineAfterNodeTime(refresh.deadline() - nodeTime);
            refresh.refreshedAt().forEach((source, time) -> r.addSources(SourceRefresh.newBuilder().setSource(keys.source(source))
                    .setRefreshedBeforeNodeTime(nodeTime - time)));
            b.addRefreshes(r);
        }
        return b.addAllRefreshSources(keys.sources()).build();
    }

    static StoredNode decode(NodeStateValue v) throws InvalidProtocolBufferException {
        Map<String, NodeState.Liveness> sources = new TreeMap<>();
        for (Liveness l : v.getSourcesList()) {
            sources.put(l.getSourceName(), new NodeState.Liveness(symbol(SourceStatus.values(), l.getStatus(), SourceStatus.UNKNOWN),
                    l.getSince(), l.hasMessage() ? l.getMessage() : null));
        }
        Map<String, PendingRefresh> refreshes = new HashMap<>();
        long nodeTime = v.getNodeTime();
        String previous = "";
        for (PendingRefreshValue r : v.getRefreshesList()) {
            // Differences are taken and undone in wrapping arithmetic: every deadline reads back as written.
            String device = RefreshKeys.device(previous, r.getSharedPrefix(), r.getDeviceSuffix());
            Map<String, Long> times = new HashMap<>();
            for (SourceRefresh source : r.getSourcesList()) {
                times.put(RefreshKeys.source(v.getRefreshSourcesList(), source.getSource()), nodeTime - source.getRefreshedBeforeNodeTime());
            }
            refreshes.put(device, new PendingRefresh(device, nodeTime + r.getDeadlineAfterNodeTime(), times));
            previous = device;
        }
        NodeState state = new NodeState(v.hasCluster() ? v.getCluster() : null, v.getNodeTime(), watermark(v.getReports()),
                watermark(v.getAllocations()), watermark(v.getInventory()), sources, v.getDepartedMap());
        return new StoredNode(state, refreshes);
    }

    private static Watermark watermark(NodeState.Watermark w) {
        return Watermark.newBuilder().setEpoch(w.epoch()).setSequence(w.sequence()).build();
    }

    private static NodeState.Watermark watermark(Watermark w) {
        return new NodeState.Watermark(w.getEpoch(), w.getSequence());
    }

    private static String symbolName(Enum<?> symbol) {
        return symbol == null ? "" : symbol.name();
    }

    /** A symbol this processor does not know (written by a newer one) reads as the enum's safe default. */
    private static <E extends Enum<E>> E symbol(E[] values, String name, E fallback) {
        for (E value : values) {
            if (value.name().equals(name)) {
                return value;
            }
        }
        return fallback;
    }
}
