package io.devhealth.processor.internals;

import io.devhealth.processor.internals.proto.PendingRefreshValue;
import io.devhealth.processor.internals.proto.SourceRefresh;
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
 * <p>Immutable. Its protobuf encoding is made once and reused: the node's value is encoded on every
 * record of the node, while each of its refreshes changes only with its own device's keep-alive.
 */
public final class PendingRefresh {

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
            PendingRefreshValue.Builder value = PendingRefreshValue.newBuilder().setDevice(device).setDeadline(deadline);
            refreshedAt.forEach((source, at) -> value.addSources(SourceRefresh.newBuilder().setSource(source).setRefreshedAt(at)));
            encoded = value.build().toByteArray();
        }
        return encoded;
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
