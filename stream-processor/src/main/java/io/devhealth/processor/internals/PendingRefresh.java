package io.devhealth.processor.internals;

import java.util.HashMap;
import java.util.Map;

/**
 * What keep-alives changed in a device's state since it was last written: the refresh time of each
 * of its sources and the deadline that follows from them. Everything else about the device is in its
 * {@code device-state} value; this is kept in its node's {@code node-state} value instead
 * ({@link NodeState#refreshes()}), so that a fleet that only says "still healthy" costs one node write
 * per commit rather than one device write per keep-alive. Reading a device applies it
 * ({@link DeviceState#withRefresh}); writing a device drops it.
 *
 * @param deadline the device's deadline after the refreshes
 * @param refreshedAt by {@link SourceReport#key()}: every source's refresh time
 */
public record PendingRefresh(long deadline, Map<String, Long> refreshedAt) {

    public PendingRefresh {
        refreshedAt = Map.copyOf(refreshedAt);
    }

    /** The refresh times and deadline of {@code state}: applied to an older state of the device, they give {@code state} back when nothing else changed. */
    public static PendingRefresh of(DeviceState state) {
        Map<String, Long> times = new HashMap<>();
        state.sources().forEach((key, source) -> times.put(key, source.refreshedAt()));
        return new PendingRefresh(state.deadline(), times);
    }
}
