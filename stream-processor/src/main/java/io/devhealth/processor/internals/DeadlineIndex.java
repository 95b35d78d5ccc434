package io.devhealth.processor.internals;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Per node, which of its devices may change through silence next, and when: the in-memory index
 * of the {@code deadline} of every device state.
 *
 * <p>Checking a node for due devices used to scan the node's devices in the store whenever its
 * earliest known deadline passed — with keep-alives moving deadlines all the time that meant
 * decoding every device of a node every few records. Here the check costs a map lookup, and only
 * devices actually due are read. Rebuilt from the store when the processor is (re)initialized, and
 * kept equal to it by every write of a device state ({@link #update}, {@link #remove}).
 * One per processor instance, stream thread only.
 */
final class DeadlineIndex {

    private record Entry(long deadline, String device) {}

    private static final Comparator<Entry> ORDER = Comparator.comparingLong(Entry::deadline).thenComparing(Entry::device);

    private final Map<String, TreeSet<Entry>> byNode = new HashMap<>();
    private final Map<String, Entry> byDevice = new HashMap<>();

    void clear() {
        byNode.clear();
        byDevice.clear();
    }

    /** {@code deadline} {@link Long#MAX_VALUE}: the device can no longer change through silence. */
    void update(String node, String device, long deadline) {
        Entry previous = byDevice.remove(device);
        TreeSet<Entry> entries = byNode.computeIfAbsent(node, n -> new TreeSet<>(ORDER));
        if (previous != null) {
            entries.remove(previous);
        }
        if (deadline != Long.MAX_VALUE) {
            Entry entry = new Entry(deadline, device);
            entries.add(entry);
            byDevice.put(device, entry);
        }
        if (entries.isEmpty()) {
            byNode.remove(node);
        }
    }

    void remove(String node, String device) {
        update(node, device, Long.MAX_VALUE);
    }

    /** The earliest deadline among the node's devices; {@link Long#MAX_VALUE} when none. */
    long earliest(String node) {
        TreeSet<Entry> entries = byNode.get(node);
        return entries == null || entries.isEmpty() ? Long.MAX_VALUE : entries.first().deadline();
    }

    /** The node's devices whose deadline is at or before {@code nodeNow}, earliest first. */
    List<String> due(String node, long nodeNow) {
        TreeSet<Entry> entries = byNode.get(node);
        List<String> due = new ArrayList<>();
        if (entries != null) {
            for (Entry entry : entries) {
                if (entry.deadline() > nodeNow) {
                    break;
                }
                due.add(entry.device());
            }
        }
        return due;
    }
}
