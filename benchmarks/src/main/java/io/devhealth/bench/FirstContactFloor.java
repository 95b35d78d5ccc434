package io.devhealth.bench;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * What writing a first contact's records costs by itself: a Kafka Streams topology that, for every input
 * record, writes {@code records} records through the broker and does nothing else — {@code records - 1}
 * puts into as many RocksDB stores with changelogs (no record cache, a key per input record, so each put is a
 * changelog record as a device's first state, history entry and pod status are) and one record sent on to an
 * output topic (as a transition is). Each carries the input record's bytes. Nothing is decoded, merged, read
 * or read back.
 *
 * <p>No Kafka Streams processor that writes that many records per input, exactly once and with the production
 * Streams settings (one stream thread, commits every 100 ms), can process its input faster than this on the same
 * machine: the stage's rate is an upper bound for a first contact that writes {@code records} per report, whatever
 * its own code costs.
 */
final class FirstContactFloor {

    private static final String WRITER = "writer";

    private FirstContactFloor() {}

    /**
     * @param records records through the broker per input record, at least 1: {@code records - 1} changelog
     *                records and one output record
     */
    static Topology topology(String input, String output, int records) {
        if (records < 1) {
            throw new IllegalArgumentException("records per input must be at least 1, got " + records);
        }
        Topology topology = new Topology();
        topology.addSource("input", Serdes.ByteArray().deserializer(), Serdes.ByteArray().deserializer(), input);
        topology.addProcessor(WRITER, () -> new Writer(records - 1), "input");
        String[] stores = new String[records - 1];
        for (int i = 0; i < stores.length; i++) {
            stores[i] = store(i);
            topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(stores[i]),
                    Serdes.String(), Serdes.ByteArray()).withCachingDisabled(), WRITER);
        }
        topology.addSink("output", output, Serdes.ByteArray().serializer(), Serdes.ByteArray().serializer(), WRITER);
        return topology;
    }

    private static String store(int index) {
        return "floor-" + index;
    }

    /** Puts each input record into every store under a key of its own, and sends it on. */
    private static final class Writer implements Processor<byte[], byte[], byte[], byte[]> {
        private final KeyValueStore<String, byte[]>[] stores;
        private ProcessorContext<byte[], byte[]> context;

        @SuppressWarnings("unchecked")
        Writer(int stores) {
            this.stores = new KeyValueStore[stores];
        }

        @Override
        public void init(ProcessorContext<byte[], byte[]> context) {
            this.context = context;
            for (int i = 0; i < stores.length; i++) {
                stores[i] = context.getStateStore(store(i));
            }
        }

        @Override
        public void process(Record<byte[], byte[]> record) {
            String key = context.recordMetadata().map(m -> m.partition() + "/" + m.offset()).orElseThrow();
            for (KeyValueStore<String, byte[]> store : stores) {
                store.put(key, record.value());
            }
            context.forward(record);
        }
    }
}
