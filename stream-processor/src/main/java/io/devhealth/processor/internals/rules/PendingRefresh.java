package io.devhealth.processor.internals.rules;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * What keep-alives changed in a device since its state was last written: every source's refresh
 * time and the device's deadline. The device's stored state with these applied
 * ({@link DeviceState#withRefresh}) is the device as it is.
 *
 * <p>Why it exists: a keep-alive changes nothing of a device but how recently its source spoke, and
 * writing the device's whole state for each one was a third of a keep-alive's cost. A node's value,
 * written once per commit whatever happens ({@code NodeStore}), carries these instead ({@code StoredNode}).
 *
 * @param device the device-state key
 * @param refreshedAt by {@link SourceReport#key()}, in key order
 */
public record PendingRefresh(String device, long deadline, Map<String, Long> refreshedAt) {

    public PendingRefresh {
        Objects.requireNonNull(device, "device");
        refreshedAt = refreshedAt.size() == 1 ? Map.copyOf(refreshedAt) : Collections.unmodifiableMap(new TreeMap<>(refreshedAt));
    }

    /** The refresh times and deadline of {@code state}: applied to an older state of the device, they give {@code state} back when nothing else changed. */
    public static PendingRefresh of(String device, DeviceState state) {
        if (state.sources().size() == 1) {
            Map.Entry<String, SourceReport> only = state.sources().entrySet().iterator().next();
            return new PendingRefresh(device, state.deadline(), Map.of(only.getKey(), only.getValue().refreshedAt()));
        }
        Map<String, Long> times = new LinkedHashMap<>();
        state.sources().forEach((key, source) -> times.put(key, source.refreshedAt()));
        return new PendingRefresh(device, state.deadline(), times);
    }
}
