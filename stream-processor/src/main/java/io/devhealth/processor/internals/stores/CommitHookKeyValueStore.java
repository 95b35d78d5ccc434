package io.devhealth.processor.internals.stores;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.internals.InternalProcessorContext;
import org.apache.kafka.streams.processor.internals.ProcessorNode;
import org.apache.kafka.streams.processor.internals.ProcessorRecordContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.internals.WrappedStateStore;

/**
 * A key-value store that tells its owner when Kafka Streams is about to commit it, so that the owner
 * can write, once per commit, values it changes on every record ({@code NodeStore}: a node's clock,
 * watermark and pending keep-alives). It keeps nothing itself: every read, range and count is the
 * wrapped store's, so interactive queries see exactly what was written, as of the last commit.
 *
 * <p>The hook is Kafka Streams' {@code CachedStateStore.flushCache()}, which it calls on every store
 * of a task before committing the task (through {@link WrappedStateStore}). What the owner writes then
 * goes to the changelog in the same transaction as the offsets. {@code clearCache()} (a task closed
 * without committing) tells the owner to drop what it did not write, as a record cache drops its dirty
 * entries. What the owner forwards from the hook goes through {@link Forwarding}.
 *
 * <p>This file is the processor's one adapter to Kafka Streams' internal API ({@code WrappedStateStore},
 * {@code InternalProcessorContext}, {@code ProcessorNode}, {@code ProcessorRecordContext}), read against
 * Kafka {@value #CHECKED_AGAINST_KAFKA}; {@code KafkaStreamsInternalsTest} fails on any other version until
 * this file has been read again against it and the constant moved.
 */
public final class CommitHookKeyValueStore<K, V> extends WrappedStateStore<KeyValueStore<K, V>, K, V>
        implements KeyValueStore<K, V> {

    /** The Kafka Streams version whose internal API this adapter was last read against. */
    public static final String CHECKED_AGAINST_KAFKA = "4.4.0";

    /** The component that writes into the store before each commit. */
    public interface Owner {
        /** Writes everything that changed since the last commit. */
        void writeBeforeCommit();

        /** Drops what was not written: the transaction it belonged to is aborted. */
        void discardUnwritten();
    }

    private Owner owner;

    CommitHookKeyValueStore(KeyValueStore<K, V> inner) {
        super(inner);
    }

    /** {@code builder}'s store, with the hook. */
    public static <K, V> StoreBuilder<KeyValueStore<K, V>> builder(StoreBuilder<KeyValueStore<K, V>> builder) {
        return new Builder<>(builder);
    }

    /**
     * Makes {@code owner} the one told about commits of {@code store}, as a processor's context hands it
     * out (wrapped in Kafka Streams' read-write decorator, which is unwrapped here).
     */
    public static void attach(StateStore store, Owner owner) {
        StateStore current = store;
        while (!(current instanceof CommitHookKeyValueStore<?, ?>) && current instanceof WrappedStateStore<?, ?, ?> wrapped) {
            current = wrapped.wrapped();
        }
        if (!(current instanceof CommitHookKeyValueStore<?, ?> hooked)) {
            throw new IllegalStateException("store " + store.name() + " was not built with CommitHookKeyValueStore.builder");
        }
        hooked.owner = Objects.requireNonNull(owner, "owner");
    }

    @Override
    public void flushCache() {
        if (owner != null) {
            owner.writeBeforeCommit();
        }
        super.flushCache();
    }

    @Override
    public void clearCache() {
        if (owner != null) {
            owner.discardUnwritten();
        }
        super.clearCache();
    }

    @Override
    public void close() {
        owner = null;
        super.close();
    }

    @Override
    public void put(K key, V value) {
        wrapped().put(key, value);
    }

    @Override
    public V putIfAbsent(K key, V value) {
        return wrapped().putIfAbsent(key, value);
    }

    @Override
    public void putAll(List<KeyValue<K, V>> entries) {
        wrapped().putAll(entries);
    }

    @Override
    public V delete(K key) {
        return wrapped().delete(key);
    }

    @Override
    public V get(K key) {
        return wrapped().get(key);
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
    public <S extends Serializer<P>, P> KeyValueIterator<K, V> prefixScan(P prefix, S prefixKeySerializer) {
        return wrapped().prefixScan(prefix, prefixKeySerializer);
    }

    @Override
    public long approximateNumEntries() {
        return wrapped().approximateNumEntries();
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
            return new CommitHookKeyValueStore<>(inner.build());
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

    /**
     * Lets a processor forward records from the commit hook, so that what it sends then belongs to the
     * transaction being committed.
     *
     * <p>Kafka Streams allows {@code forward} only while a processor node is current: while it processes a
     * record or runs a punctuator. The commit hook runs outside both, and a plain {@code forward} there fails
     * with "Current node is unknown". Kafka Streams' own record caches forward from the same place (when
     * they are flushed before a commit) by making their processor node current and giving the records a
     * record context, through internal API; this class does the same.
     */
    public static final class Forwarding {

        private final InternalProcessorContext<?, ?> context;
        private final ProcessorNode<?, ?, ?, ?> node;

        /**
         * @param context the processor's context, in its {@code init}: the processor's node is current
         *                there, and is the node records are forwarded from
         */
        public Forwarding(ProcessorContext<?, ?> context) {
            if (!(context instanceof InternalProcessorContext<?, ?> internal)) {
                throw new IllegalStateException("forwarding from the commit hook needs Kafka Streams' own processor context, not "
                        + context.getClass().getName());
            }
            this.context = internal;
            this.node = Objects.requireNonNull(internal.currentNode(), "no current processor node: call from the processor's init");
        }

        /**
         * Runs {@code forwarding}, which may call {@code forward}, as if its processor were processing a
         * record of time {@code timestamp} that came from no topic (as a punctuator does).
         */
        public void run(long timestamp, Runnable forwarding) {
            ProcessorNode<?, ?, ?, ?> previousNode = context.currentNode();
            ProcessorRecordContext previousRecord = context.recordContext();
            context.setCurrentNode(node);
            context.setRecordContext(new ProcessorRecordContext(timestamp, -1L, -1, null, new RecordHeaders()));
            try {
                forwarding.run();
            } finally {
                context.setRecordContext(previousRecord);
                context.setCurrentNode(previousNode);
            }
        }
    }
}
