package io.devhealth.processor.internals;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Decoded values of a node-keyed store, read through and written through: the store (and with it
 * the changelog) stays the only truth, this saves decoding what did not change. The node's
 * allocations and inventory are read on every change of one of its devices and written rarely, so
 * decoding them each time was a large share of a transition's cost.
 *
 * <p>Owned by one processor instance, used from its stream thread only, and emptied whenever the
 * processor is (re)initialized: after a rebalance or an aborted transaction Kafka Streams restores
 * the store and initializes the processor again, so the cache never outlives the state it mirrors.
 * Values are never mutated after they are stored.
 */
final class NodeValueCache<V> {

    private final KeyValueStore<String, V> store;
    private final Map<String, V> values;

    /** @param capacity the most nodes kept decoded; the least recently used go first */
    NodeValueCache(KeyValueStore<String, V> store, int capacity) {
        this.store = store;
        this.values = new LinkedHashMap<>(64, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
                return size() > capacity;
            }
        };
    }

    V get(String node) {
        V value = values.get(node);
        if (value == null) {
            value = store.get(node);
            if (value != null) {
                values.put(node, value);
            }
        }
        return value;
    }

    void put(String node, V value) {
        store.put(node, value);
        values.put(node, value);
    }
}
