package io.devhealth.processor.internals;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

class WriteBehindKeyValueStoreTest {

    /** A map behind the store interface, recording every write it gets. */
    private static final class RecordingStore implements KeyValueStore<String, String> {
        final TreeMap<String, String> data = new TreeMap<>();
        final List<String> writes = new ArrayList<>();
        int cacheFlushes;

        @Override public void put(String key, String value) { writes.add(key + "=" + value); data.put(key, value); }
        @Override public String putIfAbsent(String key, String value) { throw new UnsupportedOperationException(); }
        @Override public void putAll(List<KeyValue<String, String>> entries) { throw new UnsupportedOperationException(); }
        @Override public String delete(String key) { writes.add(key + " deleted"); return data.remove(key); }
        @Override public String get(String key) { return data.get(key); }
        @Override public KeyValueIterator<String, String> range(String from, String to) { throw new UnsupportedOperationException(); }
        @Override public KeyValueIterator<String, String> all() { throw new UnsupportedOperationException(); }
        @Override public long approximateNumEntries() { return data.size(); }
        @Override public String name() { return "recording"; }
        @Override public void init(StateStoreContext context, StateStore root) { }
        @Override public void close() { }
        @Override public boolean persistent() { return false; }
        @Override public boolean isOpen() { return true; }
    }

    @Test
    void shouldWriteOnlyEachKeysLatestValueWhenTheCachesAreFlushed() {
        RecordingStore inner = new RecordingStore();
        WriteBehindKeyValueStore<String, String> store = new WriteBehindKeyValueStore<>(inner);

        store.put("node-a", "1");
        store.put("node-a", "2");
        store.put("node-b", "1");
        store.put("node-a", "3");

        assertThat(inner.writes).as("nothing reaches the store beneath before a flush").isEmpty();
        assertThat(store.get("node-a")).as("reads see what is pending").isEqualTo("3");
        assertThat(store.pendingKeys()).isEqualTo(2);

        store.flushCache();

        assertThat(inner.writes).containsExactlyInAnyOrder("node-a=3", "node-b=1");
        assertThat(store.pendingKeys()).isZero();
        store.flushCache();
        assertThat(inner.writes).as("a flush with nothing pending writes nothing").hasSize(2);
    }

    /** A store over {@code inner} in which node-a's value {@code written} reached {@code inner} and {@code pending} waits. */
    private static WriteBehindKeyValueStore<String, String> writtenThenPending(RecordingStore inner, String written, String pending) {
        WriteBehindKeyValueStore<String, String> store = new WriteBehindKeyValueStore<>(inner);
        store.put("node-a", written);
        store.flushCache();
        store.put("node-a", pending);
        return store;
    }

    @Test
    void shouldShowWhatIsPendingOnlyToTheThreadThatWroteIt() throws Exception {
        WriteBehindKeyValueStore<String, String> store = writtenThenPending(new RecordingStore(), "written", "pending");

        // Another thread (an interactive query) reads what was last written: the pending value is the
        // writer's working state, which it may still change in place.
        CompletableFuture<String> elsewhere = CompletableFuture.supplyAsync(() -> store.get("node-a"));
        assertThat(elsewhere.get()).isEqualTo("written");
        assertThat(store.get("node-a")).isEqualTo("pending");
    }

    @Test
    void shouldDropWhatIsPendingWhenTheCachesAreCleared() {
        RecordingStore inner = new RecordingStore();
        WriteBehindKeyValueStore<String, String> store = writtenThenPending(inner, "committed", "of an aborted transaction");

        store.clearCache();
        store.flushCache();

        assertThat(store.get("node-a")).isEqualTo("committed");
        assertThat(inner.writes).containsExactly("node-a=committed");
    }

    @Test
    void shouldDeleteThroughAndForgetAPendingValue() {
        RecordingStore inner = new RecordingStore();
        WriteBehindKeyValueStore<String, String> store = writtenThenPending(inner, "1", "2");

        assertThat(store.delete("node-a")).isEqualTo("2");
        store.flushCache();

        assertThat(store.get("node-a")).isNull();
        assertThat(inner.writes).containsExactly("node-a=1", "node-a deleted");
        store.put("node-b", null);
        assertThat(inner.writes).as("a null value deletes").endsWith("node-b deleted");
    }

    /** Counts how often values are encoded. */
    private static final class CountingSerde implements Serde<String> {
        final AtomicInteger encoded = new AtomicInteger();

        @Override
        public Serializer<String> serializer() {
            return (topic, value) -> {
                encoded.incrementAndGet();
                return value == null ? null : value.getBytes(StandardCharsets.UTF_8);
            };
        }

        @Override
        public Deserializer<String> deserializer() {
            return (topic, bytes) -> bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
        }
    }

    /** Puts the record's key 50 times, as a node's state moves many times between two commits. */
    private static final class ManyPuts implements Processor<String, String, Void, Void> {
        private KeyValueStore<String, String> store;

        @Override
        public void init(ProcessorContext<Void, Void> context) {
            store = context.getStateStore("states");
        }

        @Override
        public void process(Record<String, String> record) {
            for (int i = 1; i <= 50; i++) {
                store.put(record.key(), record.value() + "#" + i);
            }
        }
    }

    @Test
    void shouldEncodeAKeyOncePerCommitInARealTask() throws Exception {
        CountingSerde values = new CountingSerde();
        Topology topology = new Topology();
        topology.addSource("in", Serdes.String().deserializer(), Serdes.String().deserializer(), "in");
        topology.addProcessor("puts", ManyPuts::new, "in");
        topology.addStateStore(WriteBehindKeyValueStore.builder(
                Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore("states"), Serdes.String(), values)), "puts");
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "write-behind-test");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("dh-wb").toString());
        try (TopologyTestDriver driver = new TopologyTestDriver(topology, props)) {
            TestInputTopic<String, String> in = driver.createInputTopic("in", Serdes.String().serializer(), Serdes.String().serializer());
            in.pipeInput("node-a", "r1");
            in.pipeInput("node-a", "r2");

            // The test driver commits after every record: one encoding per record, not 50.
            assertThat(values.encoded.get()).isEqualTo(2);
            KeyValueStore<String, String> store = driver.getKeyValueStore("states");
            assertThat(store.get("node-a")).isEqualTo("r2#50");
            assertThat(driver.producedTopicNames()).as("the changelog still gets the writes")
                    .contains("write-behind-test-states-changelog");
        }
    }
}
