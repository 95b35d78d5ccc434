package io.devhealth.processor.internals;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.internals.WrappedStateStore;

/**
 * A key-value store that keeps what is put into it as objects and hands each key's latest value to
 * the store beneath (its serde, record cache, changelog and RocksDB) only when Kafka Streams flushes
 * the task's caches, which it does before every commit: a key put a thousand times between two
 * commits is encoded once, and the changelog and the committed offsets stay in one transaction as
 * with any store.
 *
 * <p>Why: the processor moves its node's state (clock, de-duplication watermark, pending keep-alives)
 * on every record, and a node's records come in bursts (a collector sends all its devices'
 * keep-alives together). A record cache folds those into one changelog record per commit already,
 * but takes each value serialized: encoding the node on every record was a fifth of the stream
 * thread's time (docs/PERFORMANCE.md §2).
 *
 * <p>The hook is Kafka Streams' {@code CachedStateStore.flushCache()} (through
 * {@link WrappedStateStore}, an internal class: re-check it when upgrading Kafka). Dropped without
 * being written: what is pending when the task's caches are cleared or the store closes without a
 * flush, exactly as a record cache drops its dirty entries then (the transaction they belonged to is
 * aborted).
 *
 * <p>Reads: {@link #get} from the thread that writes (the stream thread) sees pending values; from any
 * other thread (interactive queries) it reads the store beneath, i.e. the values as of the last flush:
 * what is pending is the processor's working state, which it may go on changing in place until the
 * flush (a node's pending refreshes, {@link RefreshTable}), so it never leaves the stream thread.
 * Range reads and counts see the store beneath only; the processor keeps its current values itself
 * and iterates only at initialization, when nothing is pending.
 */
public final class WriteBehindKeyValueStore<K, V> extends WrappedStateStore<KeyValueStore<K, V>, K, V>
        implements KeyValueStore<K, V> {

    private final Map<K, V> pending = new HashMap<>();
    /** The thread that writes into this store (Kafka Streams' stream thread owning the task): the only one that sees {@link #pending}. */
    private volatile Thread writer;

    public WriteBehindKeyValueStore(KeyValueStore<K, V> inner) {
        super(inner);
    }

    /** {@code builder}'s store, written behind. */
    public static <K, V> StoreBuilder<KeyValueStore<K, V>> builder(StoreBuilder<KeyValueStore<K, V>> builder) {
        return new Builder<>(builder);
    }

    @Override
    public void init(StateStoreContext context, StateStore root) {
        pending.clear();
        super.init(context, root);
    }

    @Override
    public void put(K key, V value) {
        Objects.requireNonNull(key, "key");
        Thread current = Thread.currentThread();
        if (writer != current) {
            writer = current;
        }
        if (value == null) {
            delete(key);
        } else {
            pending.put(key, value);
        }
    }

    @Override
    public V putIfAbsent(K key, V value) {
        V current = get(key);
        if (current == null) {
            put(key, value);
        }
        return current;
    }

    @Override
    public void putAll(List<KeyValue<K, V>> entries) {
        entries.forEach(entry -> put(entry.key, entry.value));
    }

    @Override
    public V delete(K key) {
        V unwritten = isWriter() ? pending.remove(key) : null;
        V written = wrapped().delete(key);
        return unwritten != null ? unwritten : written;
    }

    @Override
    public V get(K key) {
        V unwritten = isWriter() ? pending.get(key) : null;
        return unwritten != null ? unwritten : wrapped().get(key);
    }

    @Override
    public KeyValueIterator<K, V> range(K from, K to) {
        return wrapped().range(from, to);
    }

    @Override
    public KeyValueIterator<K, V> reverseRange(K from, K to) {
        return wrapped().reverseRange(from, to);
    }

    @Override
    public KeyValueIterator<K, V> all() {
        return wrapped().all();
    }

    @Override
    public KeyValueIterator<K, V> reverseAll() {
        return wrapped().reverseAll();
    }

    @Override
    public <S extends org.apache.kafka.common.serialization.Serializer<P>, P> KeyValueIterator<K, V> prefixScan(P prefix,
                                                                                                                S prefixKeySerializer) {
        return wrapped().prefixScan(prefix, prefixKeySerializer);
    }

    @Override
    public long approximateNumEntries() {
        return wrapped().approximateNumEntries();
    }

    /** Writes what is pending into the store beneath, then lets it flush its own cache: called before every commit. */
    @Override
    public void flushCache() {
        writePending();
        super.flushCache();
    }

    @Override
    public void clearCache() {
        pending.clear();
        super.clearCache();
    }

    @Override
    public void close() {
        pending.clear();
        super.close();
    }

    private boolean isWriter() {
        return Thread.currentThread() == writer;
    }

    /** How many keys wait to be written (for tests). */
    public int pendingKeys() {
        return pending.size();
    }

    private void writePending() {
        if (pending.isEmpty()) {
            return;
        }
        for (Map.Entry<K, V> entry : pending.entrySet()) {
            wrapped().put(entry.getKey(), entry.getValue());
        }
        pending.clear();
    }

    private static final class Builder<K, V> implements StoreBuilder<KeyValueStore<K, V>> {
        private final StoreBuilder<KeyValueStore<K, V>> inner;

        Builder(StoreBuilder<KeyValueStore<K, V>> inner) {
            this.inner = Objects.requireNonNull(inner, "inner");
        }

        @Override
        public StoreBuilder<KeyValueStore<K, V>> withCachingEnabled() {
            inner.withCachingEnabled();
            return this;
        }

        @Override
        public StoreBuilder<KeyValueStore<K, V>> withCachingDisabled() {
            inner.withCachingDisabled();
            return this;
        }

        @Override
        public StoreBuilder<KeyValueStore<K, V>> withLoggingEnabled(Map<String, String> config) {
            inner.withLoggingEnabled(config);
            return this;
        }

        @Override
        public StoreBuilder<KeyValueStore<K, V>> withLoggingDisabled() {
            inner.withLoggingDisabled();
            return this;
        }

        @Override
        public KeyValueStore<K, V> build() {
            return new WriteBehindKeyValueStore<>(inner.build());
        }

        @Override
        public Map<String, String> logConfig() {
            return inner.logConfig();
        }

        @Override
        public boolean loggingEnabled() {
            return inner.loggingEnabled();
        }

        @Override
        public String name() {
            return inner.name();
        }
    }
}
