package io.devhealth.processor.internals;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.WireFormat;
import io.devhealth.processor.internals.proto.PendingRefreshValue;
import io.devhealth.processor.internals.proto.SourceRefresh;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What keep-alives changed in a device's state since it was last written: the refresh time of each
 * of its sources and the deadline that follows from them. Everything else about the device is in its
 * {@code device-state} value; this is kept in its node's {@code node-state} value instead
 * ({@link NodeState#refreshes()}), so that a fleet that only says "still healthy" costs one node write
 * per commit rather than one device write per keep-alive. Reading a device applies it
 * ({@link DeviceState#withRefresh}); writing a device drops it.
 *
 * <p>Immutable. Its protobuf encoding is made once and reused: the node's value is encoded at every
 * commit after a record of the node, while each of its refreshes changes only with its own device's
 * keep-alive.
 */
public final class PendingRefresh {

    private static final int DEVICE = PendingRefreshValue.DEVICE_FIELD_NUMBER;
    private static final int DEADLINE = PendingRefreshValue.DEADLINE_FIELD_NUMBER;
    private static final int SOURCES = PendingRefreshValue.SOURCES_FIELD_NUMBER;
    private static final int SOURCE = SourceRefresh.SOURCE_FIELD_NUMBER;
    private static final int REFRESHED_AT = SourceRefresh.REFRESHED_AT_FIELD_NUMBER;

    private final String device;
    private final long deadline;
    private final Map<String, Long> refreshedAt;
    private byte[] encoded;

    /**
     * @param device the device-state key
     * @param deadline the device's deadline after the refreshes
     * @param refreshedAt by {@link SourceReport#key()}: every source's refresh time
     */
    public PendingRefresh(String device, long deadline, Map<String, Long> refreshedAt) {
        this.device = Objects.requireNonNull(device, "device");
        this.deadline = deadline;
        this.refreshedAt = Map.copyOf(refreshedAt);
    }

    /** The refresh times and deadline of {@code state}: applied to an older state of the device, they give {@code state} back when nothing else changed. */
    public static PendingRefresh of(String device, DeviceState state) {
        return new PendingRefresh(device, state.deadline(), refreshTimes(state));
    }

    static Map<String, Long> refreshTimes(DeviceState state) {
        if (state.sources().size() == 1) {
            Map.Entry<String, SourceReport> only = state.sources().entrySet().iterator().next();
            return Map.of(only.getKey(), only.getValue().refreshedAt()); // most devices: no map to build and copy
        }
        Map<String, Long> times = new HashMap<>();
        state.sources().forEach((key, source) -> times.put(key, source.refreshedAt()));
        return times;
    }

    public String device() {
        return device;
    }

    public long deadline() {
        return deadline;
    }

    public Map<String, Long> refreshedAt() {
        return refreshedAt;
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
        // Strings go in as their UTF-8 bytes (the same wire format as writeString): the JDK converts an
        // ASCII string with one array copy, protobuf measures and encodes it char by char, twice.
        byte[] deviceUtf8 = device.getBytes(StandardCharsets.UTF_8);
        int size = bytesSize(DEVICE, deviceUtf8);
        size += deadline == 0L ? 0 : CodedOutputStream.computeInt64Size(DEADLINE, deadline);
        byte[][] sourcesUtf8 = new byte[refreshedAt.size()][];
        long[] times = new long[refreshedAt.size()];
        int[] sourceSizes = new int[refreshedAt.size()];
        int i = 0;
        for (Map.Entry<String, Long> source : refreshedAt.entrySet()) {
            sourcesUtf8[i] = source.getKey().getBytes(StandardCharsets.UTF_8);
            times[i] = source.getValue();
            sourceSizes[i] = bytesSize(SOURCE, sourcesUtf8[i])
                    + (times[i] == 0L ? 0 : CodedOutputStream.computeInt64Size(REFRESHED_AT, times[i]));
            size += CodedOutputStream.computeTagSize(SOURCES) + CodedOutputStream.computeUInt32SizeNoTag(sourceSizes[i]) + sourceSizes[i];
            i++;
        }
        byte[] bytes = new byte[size];
        CodedOutputStream out = CodedOutputStream.newInstance(bytes);
        try {
            writeBytes(out, DEVICE, deviceUtf8);
            if (deadline != 0L) {
                out.writeInt64(DEADLINE, deadline);
            }
            for (i = 0; i < sourceSizes.length; i++) {
                out.writeTag(SOURCES, WireFormat.WIRETYPE_LENGTH_DELIMITED);
                out.writeUInt32NoTag(sourceSizes[i]);
                writeBytes(out, SOURCE, sourcesUtf8[i]);
                if (times[i] != 0L) {
                    out.writeInt64(REFRESHED_AT, times[i]);
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

    @Override
    public boolean equals(Object other) {
        return other instanceof PendingRefresh that && device.equals(that.device) && deadline == that.deadline
                && refreshedAt.equals(that.refreshedAt);
    }

    @Override
    public int hashCode() {
        return Objects.hash(device, deadline, refreshedAt);
    }

    @Override
    public String toString() {
        return "PendingRefresh[device=" + device + ", deadline=" + deadline + ", refreshedAt=" + refreshedAt + "]";
    }
}
