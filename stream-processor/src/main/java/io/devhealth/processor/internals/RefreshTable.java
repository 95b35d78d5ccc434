package io.devhealth.processor.internals;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * The pending refreshes of one node's devices ({@link NodeState#refreshes()}), by device-state key:
 * an immutable map kept as one array.
 *
 * <p>Every keep-alive replaces one entry, and the node's state is immutable, so each keep-alive used
 * to copy a hash map of the node's refreshes (rehashing every entry: a twentieth of a keep-alive's
 * cost). A node has at most {@link NodeProcessor#MAX_PENDING_REFRESHES} of them, typically its 8
 * GPUs, so an array copy and a linear lookup (hash codes first) are cheaper than hashing.
 */
final class RefreshTable extends AbstractMap<String, PendingRefresh> {

    static final RefreshTable EMPTY = new RefreshTable(new PendingRefresh[0]);

    private final PendingRefresh[] refreshes;

    private RefreshTable(PendingRefresh[] refreshes) {
        this.refreshes = refreshes;
    }

    /** {@code map} as a table: itself when it is one already. */
    static RefreshTable of(Map<String, PendingRefresh> map) {
        if (map instanceof RefreshTable table) {
            return table;
        }
        if (map == null || map.isEmpty()) {
            return EMPTY;
        }
        PendingRefresh[] refreshes = new PendingRefresh[map.size()];
        int i = 0;
        for (Map.Entry<String, PendingRefresh> entry : map.entrySet()) {
            if (!entry.getKey().equals(entry.getValue().device())) {
                throw new IllegalArgumentException("refresh of " + entry.getValue().device() + " kept under " + entry.getKey());
            }
            refreshes[i++] = entry.getValue();
        }
        return new RefreshTable(refreshes);
    }

    /** This table with {@code refresh} as its device's entry. */
    RefreshTable with(PendingRefresh refresh) {
        int index = indexOf(refresh.device());
        PendingRefresh[] next;
        if (index >= 0) {
            next = refreshes.clone();
            next[index] = refresh;
        } else {
            next = Arrays.copyOf(refreshes, refreshes.length + 1);
            next[refreshes.length] = refresh;
        }
        return new RefreshTable(next);
    }

    /** This table without {@code device}'s entry. */
    RefreshTable without(String device) {
        int index = indexOf(device);
        if (index < 0) {
            return this;
        }
        PendingRefresh[] next = new PendingRefresh[refreshes.length - 1];
        System.arraycopy(refreshes, 0, next, 0, index);
        System.arraycopy(refreshes, index + 1, next, index, next.length - index);
        return new RefreshTable(next);
    }

    private int indexOf(Object device) {
        if (!(device instanceof String key)) {
            return -1;
        }
        int hash = key.hashCode();
        for (int i = 0; i < refreshes.length; i++) {
            String candidate = refreshes[i].device();
            if (candidate.hashCode() == hash && candidate.equals(key)) {
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
        return refreshes.length;
    }

    @Override
    public Collection<PendingRefresh> values() {
        return Collections.unmodifiableList(Arrays.asList(refreshes));
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
                        return next < refreshes.length;
                    }

                    @Override
                    public Map.Entry<String, PendingRefresh> next() {
                        if (next >= refreshes.length) {
                            throw new NoSuchElementException();
                        }
                        PendingRefresh refresh = refreshes[next++];
                        return new AbstractMap.SimpleImmutableEntry<>(refresh.device(), refresh);
                    }
                };
            }

            @Override
            public int size() {
                return refreshes.length;
            }
        };
    }
}
