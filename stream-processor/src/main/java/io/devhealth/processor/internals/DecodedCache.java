package io.devhealth.processor.internals;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Decoded values of a key-value store, read through and written through: the store (and with it
 * the changelog) stays the only truth, this saves decoding what did not change: the fleet counter
 * updates the same few windows with every transition of a burst.
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
}
