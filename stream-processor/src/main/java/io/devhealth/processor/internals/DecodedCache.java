package io.devhealth.processor.internals;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Decoded values of a key-value store, read through and written through: the store (and with it
 * the changelog) stays the only truth, this saves decoding what did not change. A node's
 * allocations and inventory are read on every change of one of its devices and written rarely, and
 * a device's state is read on every report about it: decoding them each time was a large share of a
 * report's cost (docs/PERFORMANCE.md §6).
 *
 * <p>Owned by one processor instance, used from its stream thread only, and emptied whenever the
 * processor is (re)initialized: after a rebalance or an aborted transaction Kafka Streams restores
 * the store and initializes the processor again, so the cache never outlives the state it mirrors.
 * Values are never mutated after they are stored.
 */
final class DecodedCache<V> {

    private final KeyValueStore<String, V> store;
    private final Map<String, V> values;

    /** @param capacity the most keys kept decoded; the least recently used go first */
    DecodedCache(KeyValueStore<String, V> store, int capacity) {
        this.store = store;
        this.values = new LinkedHashMap<>(64, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
                return size() > capacity;
            }
        };
    }

    V get(String key) {
        V value = values.get(key);
        if (value == null) {
            value = store.get(key);
            if (value != null) {
                values.put(key, value);
            }
        }
        return value;
    }

    void put(String key, V value) {
        store.put(key, value);
        values.put(key, value);
    }

    void delete(String key) {
        store.delete(key);
        values.remove(key);
    }

    /** The values of the keys that start with {@code prefix}, from the store (decoding every entry): for rare scans only. */
    List<KeyValue<String, V>> prefixScan(String prefix, Serializer<String> keys) {
        try (KeyValueIterator<String, V> entries = store.prefixScan(prefix, keys)) {
            List<KeyValue<String, V>> found = new ArrayList<>();
            entries.forEachRemaining(found::add);
            return found;
        }
    }

    /**
     * Hands every key's value to {@code action}, from the store (decoding every entry), one at a time:
     * for rebuilding in-memory indexes at start without holding a task's values in a list.
     */
    void forEach(BiConsumer<String, V> action) {
        try (KeyValueIterator<String, V> entries = store.all()) {
            entries.forEachRemaining(entry -> action.accept(entry.key, entry.value));
        }
    }
}
