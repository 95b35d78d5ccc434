package io.devhealth.processor.internals;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.WireFormat;
import io.devhealth.processor.internals.proto.PendingRefreshValue;
import io.devhealth.processor.internals.proto.SourceRefresh;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.ToLongFunction;

/**
 * What keep-alives changed in a device's state since it was last written: the refresh time of each
 * of its sources and the deadline that follows from them. Everything else about the device is in its
 * {@code device-state} value; this is kept in its node's {@code node-state} value instead
 * ({@link NodeState#refreshes()}), so that a fleet that only says "still healthy" costs one node write
 * per commit rather than one device write per keep-alive. Reading a device applies it
 * ({@link DeviceState#withRefresh}); writing a device drops it.
 *
 * <p>Mutable, and like all of the processor's decoded state used from its stream thread only: a
 * keep-alive moves its source's time and the deadline in place ({@link #refresh(int, long, long)}),
 * because building a new refresh, a new table of the node's refreshes and a new node state for every
 * keep-alive was most of what a keep-alive cost (docs/PERFORMANCE.md §2). Its protobuf encoding is
 * kept until it next changes: the node's value is encoded at every commit after a record of the node,
 * while each of its refreshes changes only with its own device's keep-alives.
 */
public final class PendingRefresh {

    private static final int DEVICE = PendingRefreshValue.DEVICE_FIELD_NUMBER;
    private static final int DEADLINE = PendingRefreshValue.DEADLINE_FIELD_NUMBER;
    private static final int SOURCES = PendingRefreshValue.SOURCES_FIELD_NUMBER;
    private static final int SOURCE = SourceRefresh.SOURCE_FIELD_NUMBER;
    private static final int REFRESHED_AT = SourceRefresh.REFRESHED_AT_FIELD_NUMBER;

    private final String device;
    /** Source keys ({@link SourceReport#key()}), sorted as a device state sorts its sources. */
    private final String[] sources;
    private final long[] refreshedAt;
    private long deadline;
    private byte[] encoded;
    /**
     * The device's state as stored, which this refresh applies to, when the processor has read it: a
     * keep-alive then finds its device through its node's refreshes alone, without a look-up among
     * all the task's devices. Not part of the value: never encoded, nor compared.
     */
    private DeviceState stored;
    /** {@link KeepAlivePath#followed} of {@link #stored} when that source is the one this refreshes, else null. */
    private SourceReport followed;
    /** The UTF-8 bytes of {@code device} and {@code sources}, which never change: made at the first encoding. */
    private byte[] deviceUtf8;
    private byte[][] sourcesUtf8;

    /**
     * @param device the device-state key
     * @param deadline the device's deadline after the refreshes
     * @param refreshedAt by {@link SourceReport#key()}: every source's refresh time
     */
    public PendingRefresh(String device, long deadline, Map<String, Long> refreshedAt) {
        this(device, deadline, new TreeMap<>(refreshedAt).entrySet(), Map.Entry::getValue);
    }

    /** One source's refresh: the common device, which a keep-alive refreshes for the first time since it was written. */
    PendingRefresh(String device, long deadline, String source, long refreshedAt) {
        this(device, deadline, List.of(Map.entry(Objects.requireNonNull(source, "source"), refreshedAt)), Map.Entry::getValue);
    }

    /** @param sources by source key, in key order; {@code time} gives each one's refresh time */
    private <T> PendingRefresh(String device, long deadline, Collection<Map.Entry<String, T>> sources,
                               ToLongFunction<Map.Entry<String, T>> time) {
        this.device = Objects.requireNonNull(device, "device");
        this.deadline = deadline;
        this.sources = new String[sources.size()];
        this.refreshedAt = new long[sources.size()];
        int i = 0;
        for (Map.Entry<String, T> source : sources) {
            this.sources[i] = source.getKey();
            this.refreshedAt[i++] = time.applyAsLong(source);
        }
    }

    /** The refresh times and deadline of {@code state}: applied to an older state of the device, they give {@code state} back when nothing else changed. */
    public static PendingRefresh of(String device, DeviceState state) {
        // A state's sources are sorted already: read in place, not copied into a sorted map first.
        return new PendingRefresh(device, state.deadline(), state.sources().entrySet(), source -> source.getValue().refreshedAt());
    }

    public String device() {
        return device;
    }

    public long deadline() {
        return deadline;
    }

    /** Every source's refresh time by {@link SourceReport#key()}, in key order: a copy. */
    public Map<String, Long> refreshedAt() {
        Map<String, Long> times = new LinkedHashMap<>();
        for (int i = 0; i < sources.length; i++) {
            times.put(sources[i], refreshedAt[i]);
        }
        return Collections.unmodifiableMap(times);
    }

    /** The device's stored state this refresh applies to; null when not known yet (a refresh read from the store). */
    DeviceState stored() {
        return stored;
    }

    /** @param state the device's state as it is in the store now, or null (the processor drops the refresh whenever it writes the device) */
    PendingRefresh stored(DeviceState state) {
        this.stored = state;
        SourceReport source = state == null ? null : KeepAlivePath.followed(state);
        this.followed = source != null && refreshesOnly(state.onlySource().getKey()) ? source : null;
        return this;
    }

    /** The source {@link #stored} shows, when it has only that one and this refreshes it: what a keep-alive checks itself against. */
    SourceReport followed() {
        return followed;
    }

    /** Whether this refreshes source {@code key} and no other. */
    boolean refreshesOnly(String key) {
        return sources.length == 1 && sources[0].equals(key);
    }

    int sourceCount() {
        return sources.length;
    }

    String source(int index) {
        return sources[index];
    }

    long refreshedAt(int index) {
        return refreshedAt[index];
    }

    /** Moves source {@code index}'s refresh time to {@code time} and the device's deadline to {@code nextDeadline}. */
    void refresh(int index, long time, long nextDeadline) {
        refreshedAt[index] = time;
        deadline = nextDeadline;
        encoded = null;
    }

    /**
     * Takes the refresh times and deadline of {@code state}, when it has the sources this refresh has.
     *
     * @return whether it did; if not, the device needs a new refresh ({@link #of})
     */
    boolean refresh(DeviceState state) {
        if (state.sources().size() != sources.length) {
            return false;
        }
        int i = 0;
        for (Map.Entry<String, SourceReport> source : state.sources().entrySet()) {
            if (!source.getKey().equals(sources[i++])) {
                return false;
            }
        }
        i = 0;
        for (SourceReport source : state.sources().values()) {
            refreshedAt[i++] = source.refreshedAt();
        }
        deadline = state.deadline();
        encoded = null;
        return true;
    }

    /** The serialized {@link PendingRefreshValue}; stream thread only, like every state value. */
    byte[] encoded() {
        if (encoded == null) {
            encoded = encode();
        }
        return encoded;
    }

    /**
     * {@link PendingRefreshValue} written field by field, exactly as its generated code writes it
     * (fields in number order, proto3 defaults left out; {@code PendingRefreshTest} compares the
     * two): every keep-alive makes a new refresh, and building the message to encode it was half of
     * writing a node's value.
     */
    private byte[] encode() {
        // Strings go in as their UTF-8 bytes (the same wire format as writeString), made once: protobuf
        // measures and encodes a string char by char, twice, on every call.
        if (deviceUtf8 == null) {
            deviceUtf8 = device.getBytes(StandardCharsets.UTF_8);
            sourcesUtf8 = new byte[sources.length][];
            for (int i = 0; i < sources.length; i++) {
                sourcesUtf8[i] = sources[i].getBytes(StandardCharsets.UTF_8);
            }
        }
        int size = bytesSize(DEVICE, deviceUtf8);
        size += deadline == 0L ? 0 : CodedOutputStream.computeInt64Size(DEADLINE, deadline);
        int[] sourceSizes = new int[sources.length];
        for (int i = 0; i < sources.length; i++) {
            sourceSizes[i] = bytesSize(SOURCE, sourcesUtf8[i])
                    + (refreshedAt[i] == 0L ? 0 : CodedOutputStream.computeInt64Size(REFRESHED_AT, refreshedAt[i]));
            size += CodedOutputStream.computeTagSize(SOURCES) + CodedOutputStream.computeUInt32SizeNoTag(sourceSizes[i]) + sourceSizes[i];
        }
        byte[] bytes = new byte[size];
        CodedOutputStream out = CodedOutputStream.newInstance(bytes);
        try {
            writeBytes(out, DEVICE, deviceUtf8);
            if (deadline != 0L) {
                out.writeInt64(DEADLINE, deadline);
            }
            for (int i = 0; i < sources.length; i++) {
                out.writeTag(SOURCES, WireFormat.WIRETYPE_LENGTH_DELIMITED);
                out.writeUInt32NoTag(sourceSizes[i]);
                writeBytes(out, SOURCE, sourcesUtf8[i]);
                if (refreshedAt[i] != 0L) {
                    out.writeInt64(REFRESHED_AT, refreshedAt[i]);
                }
            }
            out.checkNoSpaceLeft();
        } catch (IOException e) {
            throw new UncheckedIOException("encoding a pending refresh into an array of its exact size", e);
        }
        return bytes;
    }

    /** The size of a string field holding {@code utf8} (a bytes field has its wire format); 0 for the empty string, which proto3 leaves out. */
    private static int bytesSize(int field, byte[] utf8) {
        return utf8.length == 0 ? 0 : CodedOutputStream.computeByteArraySize(field, utf8);
    }

    private static void writeBytes(CodedOutputStream out, int field, byte[] utf8) throws IOException {
        if (utf8.length > 0) {
            out.writeByteArray(field, utf8);
        }
    }

    /** By value, as of now (it is mutable: never a key of a hash map). */
    @Override
    public boolean equals(Object other) {
        return other instanceof PendingRefresh that && device.equals(that.device) && deadline == that.deadline
                && Arrays.equals(sources, that.sources) && Arrays.equals(refreshedAt, that.refreshedAt);
    }

    @Override
    public int hashCode() {
        return Objects.hash(device, deadline, Arrays.hashCode(sources), Arrays.hashCode(refreshedAt));
    }

    @Override
    public String toString() {
        return "PendingRefresh[device=" + device + ", deadline=" + deadline + ", refreshedAt=" + refreshedAt() + "]";
    }
}
