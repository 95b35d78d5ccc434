package io.devhealth.bench;

import io.devhealth.processor.ProcessorSerdes;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceReportEnvelope;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * The least any processor meeting issue 5 must do per record, as a Kafka Streams topology: decode the
 * Avro record and de-duplicate it by its node's (collector epoch, sequence) watermark, kept in a
 * RocksDB store with a changelog and a record cache (exactly-once needs the watermark to commit with
 * the offsets). No merge, no device state, no output. Between the pass-through and the devhealth
 * topology, it tells what a stateful task costs by itself, and what our own work costs on top.
 *
 * <p>With {@code allInputs} it also subscribes the two other node-keyed inputs (allocations and
 * inventory, decoded and otherwise ignored), as the devhealth topology does: the difference between
 * the two variants is what a task with three input partitions costs over one.
 */
final class StatefulFloor {

    private static final String WATERMARKS = "watermarks";

    private StatefulFloor() {}

    static Topology topology(Topics topics, ProcessorSerdes serdes, boolean allInputs) {
        Topology topology = new Topology();
        topology.addSource("reports", Serdes.String().deserializer(), serdes.deviceReports().deserializer(), topics.deviceReports());
        String[] parents = {"reports"};
        if (allInputs) {
            topology.addSource("allocations", Serdes.String().deserializer(), serdes.nodeAllocations().deserializer(),
                    topics.nodeAllocations());
            topology.addSource("inventory", Serdes.String().deserializer(), serdes.nodeDevices().deserializer(),
                    topics.deviceInventory());
            parents = new String[] {"reports", "allocations", "inventory"};
        }
        topology.addProcessor("dedup", Dedup::new, parents);
        topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(WATERMARKS),
                Serdes.String(), Serdes.Long()).withCachingEnabled(), "dedup");
        return topology;
    }

    /** Drops a report at or below its node's sequence watermark, and moves the watermark. */
    private static final class Dedup implements Processor<String, Object, Void, Void> {
        private KeyValueStore<String, Long> watermarks;

        @Override
        public void init(ProcessorContext<Void, Void> context) {
            watermarks = context.getStateStore(WATERMARKS);
        }

        @Override
        public void process(Record<String, Object> record) {
            if (record.value() instanceof DeviceReportEnvelope envelope && envelope.getPayload() instanceof DeviceHealthReport report) {
                Long watermark = watermarks.get(record.key());
                if (watermark == null || report.getSequence() > watermark) {
                    watermarks.put(record.key(), report.getSequence());
                }
            }
        }
    }
}
