package io.devhealth.processor.internals;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.ToLongFunction;

/**
 * Per node, which of its devices may change through silence next, and when: the in-memory index
 * of the {@code deadline} of every device state.
 *
 * <p>Checking a node for due devices used to scan the node's devices in the store whenever its
 * earliest known deadline passed — with keep-alives moving deadlines all the time that meant
 * decoding every device of a node every few records. Here the check costs a map lookup, and only
 * devices actually due are read. Rebuilt from the store when the processor is (re)initialized, and
 * kept by every change of a device state ({@link #update}, {@link #extend}, {@link #remove}).
 *
 * <p>An indexed deadline is never later than the device's own, but may be earlier: a keep-alive moves
 * a deadline later on every report, and {@link #extend} leaves the earlier one in place (a lower bound)
 * rather than re-sorting the node's devices each time. A device found due that is not is put back
 * with its actual deadline by the caller ({@link #update}): once per timeout instead of once per
 * keep-alive. One per processor instance, stream thread only.
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

    /**
     * The device's deadline moved to {@code deadline}, typically later (a keep-alive): an earlier
     * indexed deadline stays, as a lower bound, so that nothing is re-sorted; a later one, or none, is
     * replaced.
     */
    void extend(String node, String device, long deadline) {
        Entry indexed = byDevice.get(device);
        if (indexed == null || indexed.deadline() > deadline) {
            update(node, device, deadline);
        }
    }

    /** Nodes with a device that may be due by {@code nodeNow(node)} (indexed deadlines are lower bounds). */
    List<String> nodesDue(ToLongFunction<String> nodeNow) {
        List<String> due = new ArrayList<>();
        byNode.forEach((node, entries) -> {
            if (!entries.isEmpty() && entries.first().deadline() <= nodeNow.applyAsLong(node)) {
                due.add(node);
            }
        });
        return due;
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
