package io.devhealth.processor.internals;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;

/**
 * The pending refreshes of one node's devices ({@link NodeState#refreshes()}), by device-state key,
 * kept in one array.
 *
 * <p>Mutable: the processor's working copy of its node, shared by every {@link NodeState} of that node
 * it makes (a keep-alive changes a refresh in place, {@link PendingRefresh}) and owned by its stream
 * thread. A node has at most {@link NodeProcessor#MAX_PENDING_REFRESHES} refreshes, typically its 8
 * GPUs, so a linear look-up (hash codes first) is cheaper than hashing into a map.
 */
final class RefreshTable extends AbstractMap<String, PendingRefresh> {

    private PendingRefresh[] refreshes = new PendingRefresh[8];
    /** The hash codes of the refreshes' device keys: a look-up reads one array, not every key. */
    private int[] hashes = new int[8];
    private int size;

    /** An empty table. */
    RefreshTable() {
    }

    /** {@code map} as a table: itself when it is one already (so that every state of a node shares its node's table), else a new one. */
    static RefreshTable of(Map<String, PendingRefresh> map) {
        if (map instanceof RefreshTable table) {
            return table;
        }
        RefreshTable table = new RefreshTable();
        if (map != null) {
            map.forEach(table::put);
        }
        return table;
    }

    @Override
    public PendingRefresh put(String device, PendingRefresh refresh) {
        if (!Objects.requireNonNull(device, "device").equals(refresh.device())) {
            throw new IllegalArgumentException("refresh of " + refresh.device() + " kept under " + device);
        }
        int index = indexOf(device);
        if (index >= 0) {
            PendingRefresh previous = refreshes[index];
            refreshes[index] = refresh;
            return previous;
        }
        if (size == refreshes.length) {
            refreshes = Arrays.copyOf(refreshes, size * 2);
            hashes = Arrays.copyOf(hashes, size * 2);
        }
        hashes[size] = device.hashCode();
        refreshes[size++] = refresh;
        return null;
    }

    @Override
    public PendingRefresh remove(Object device) {
        int index = indexOf(device);
        if (index < 0) {
            return null;
        }
        PendingRefresh removed = refreshes[index];
        System.arraycopy(refreshes, index + 1, refreshes, index, size - index - 1);
        System.arraycopy(hashes, index + 1, hashes, index, size - index - 1);
        refreshes[--size] = null;
        return removed;
    }

    private int indexOf(Object device) {
        if (!(device instanceof String key)) {
            return -1;
        }
        int hash = key.hashCode();
        for (int i = 0; i < size; i++) {
            if (hashes[i] == hash && refreshes[i].device().equals(key)) {
                return i;
            }
        }
        return -1;
    }

    @Override
    public PendingRefresh get(Object device) {
        int index = indexOf(device);
        return index < 0 ? null : refreshes[index];
    }

    @Override
    public boolean containsKey(Object device) {
        return indexOf(device) >= 0;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public Collection<PendingRefresh> values() {
        return Collections.unmodifiableList(Arrays.asList(refreshes).subList(0, size));
    }

    @Override
    public Set<Map.Entry<String, PendingRefresh>> entrySet() {
        return new AbstractSet<>() {
            @Override
            public Iterator<Map.Entry<String, PendingRefresh>> iterator() {
                return new Iterator<>() {
                    private int next;

                    @Override
                    public boolean hasNext() {
                        return next < size;
                    }

                    @Override
                    public Map.Entry<String, PendingRefresh> next() {
                        if (next >= size) {
                            throw new NoSuchElementException();
                        }
                        PendingRefresh refresh = refreshes[next++];
                        return new AbstractMap.SimpleImmutableEntry<>(refresh.device(), refresh);
                    }
                };
            }

            @Override
            public int size() {
                return size;
            }
        };
    }
}
