package io.devhealth.processor.internals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * Per node, which of its devices may change through silence next, and when: the in-memory index
 * of the {@code deadline} of every device state.
 *
 * <p>Checking a node for due devices used to scan the node's devices in the store whenever its
 * earliest known deadline passed — with keep-alives moving deadlines all the time that meant
 * decoding every device of a node every few records. Here the check costs a map lookup, and only
 * devices actually due are read. Rebuilt from the store when the processor is (re)initialized, and
 * kept by every change of a device state ({@link #update}, {@link #remove}).
 *
 * <p>Every keep-alive moves a deadline, so moving one must be cheap: a node's devices are kept in two
 * parallel arrays, scanned linearly (a node has a handful of devices, rarely more than 64), with the
 * earliest deadline cached. A sorted set re-sorted the node on every keep-alive, and keeping earlier
 * deadlines as lower bounds instead cost a device-state read per device and timeout to put them
 * right (a tenth of a keep-alive's cost). One per processor instance, stream thread only.
 */
final class DeadlineIndex {

    private final Map<String, NodeDeadlines> byNode = new HashMap<>();

    void clear() {
        byNode.clear();
    }

    /** {@code deadline} {@link Long#MAX_VALUE}: the device can no longer change through silence. */
    void update(String node, String device, long deadline) {
        NodeDeadlines deadlines = byNode.get(node);
        if (deadlines == null) {
            if (deadline == Long.MAX_VALUE) {
                return;
            }
            deadlines = new NodeDeadlines();
            byNode.put(node, deadlines);
        }
        deadlines.set(device, deadline);
        if (deadlines.size == 0) {
            byNode.remove(node);
        }
    }

    void remove(String node, String device) {
        update(node, device, Long.MAX_VALUE);
    }

    /** Nodes with a device due by {@code nodeNow(node)}. */
    List<String> nodesDue(ToLongFunction<String> nodeNow) {
        List<String> due = new ArrayList<>();
        byNode.forEach((node, deadlines) -> {
            if (deadlines.earliest <= nodeNow.applyAsLong(node)) {
                due.add(node);
            }
        });
        return due;
    }

    /** The earliest deadline among the node's devices; {@link Long#MAX_VALUE} when none. */
    long earliest(String node) {
        NodeDeadlines deadlines = byNode.get(node);
        return deadlines == null ? Long.MAX_VALUE : deadlines.earliest;
    }

    /** The node's devices whose deadline is at or before {@code nodeNow}, earliest first (ties by device). */
    List<String> due(String node, long nodeNow) {
        NodeDeadlines deadlines = byNode.get(node);
        if (deadlines == null || deadlines.earliest > nodeNow) {
            return List.of();
        }
        List<Integer> indexes = new ArrayList<>();
        for (int i = 0; i < deadlines.size; i++) {
            if (deadlines.deadlines[i] <= nodeNow) {
                indexes.add(i);
            }
        }
        indexes.sort((a, b) -> deadlines.deadlines[a] != deadlines.deadlines[b]
                ? Long.compare(deadlines.deadlines[a], deadlines.deadlines[b])
                : deadlines.devices[a].compareTo(deadlines.devices[b]));
        List<String> due = new ArrayList<>(indexes.size());
        indexes.forEach(i -> due.add(deadlines.devices[i]));
        return due;
    }

    /** One node's devices with a deadline, in no order, and the earliest of them. */
    private static final class NodeDeadlines {
        private String[] devices = new String[8];
        /** The devices' hash codes: finding one reads this array, not every device's key. */
        private int[] hashes = new int[8];
        private long[] deadlines = new long[8];
        private int size;
        private long earliest = Long.MAX_VALUE;

        void set(String device, long deadline) {
            int index = indexOf(device);
            if (index < 0) {
                if (deadline == Long.MAX_VALUE) {
                    return;
                }
                if (size == devices.length) {
                    devices = Arrays.copyOf(devices, size * 2);
                    hashes = Arrays.copyOf(hashes, size * 2);
                    deadlines = Arrays.copyOf(deadlines, size * 2);
                }
                devices[size] = device;
                hashes[size] = device.hashCode();
                deadlines[size] = deadline;
                size++;
                earliest = Math.min(earliest, deadline);
                return;
            }
            long previous = deadlines[index];
            devices[index] = device; // the caller's instance: it passes the same again (equals by identity)
            if (deadline == Long.MAX_VALUE) {
                size--;
                devices[index] = devices[size];
                hashes[index] = hashes[size];
                deadlines[index] = deadlines[size];
                devices[size] = null;
            } else {
                deadlines[index] = deadline;
            }
            if (deadline < earliest) {
                earliest = deadline;
            } else if (previous == earliest && deadline != previous) {
                earliest = Long.MAX_VALUE; // the earliest moved later or left: find the new one
                for (int i = 0; i < size; i++) {
                    earliest = Math.min(earliest, deadlines[i]);
                }
            }
        }

        private int indexOf(String device) {
            int hash = device.hashCode();
            for (int i = 0; i < size; i++) {
                if (hashes[i] == hash && devices[i].equals(device)) {
                    return i;
                }
            }
            return -1;
        }
    }
}
