package io.devhealth.bench;

import io.devhealth.processor.ProcessorSerdes;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.NodeEvent;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * The least any processor must do per record when it processes exactly once and drops the duplicates
 * a collector's replayed spool sends, as a Kafka Streams topology: decode the
 * Avro record and de-duplicate it by its node's (collector epoch, sequence) watermark, kept in a
 * RocksDB store with a changelog and a record cache (exactly-once needs the watermark to commit with
 * the offsets). No merge, no device state, no output. Between the pass-through and the devhealth
 * topology, it tells what a stateful task costs by itself, and what our own work costs on top.
 *
 * <p>It reads node-events, as the devhealth topology does: one input partition per task, so Kafka
 * Streams' per-record readiness check over other, mostly empty, input partitions costs nothing here.
 */
final class StatefulFloor {

    private static final String WATERMARKS = "watermarks";

    private StatefulFloor() {}

    static Topology topology(Topics topics, ProcessorSerdes serdes) {
        Topology topology = new Topology();
        topology.addSource("events", Serdes.String().deserializer(), serdes.nodeEvents().deserializer(), topics.nodeEvents());
        topology.addProcessor("dedup", Dedup::new, "events");
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
            if (record.value() instanceof NodeEvent event && event.getPayload() instanceof DeviceHealthReport report) {
                Long watermark = watermarks.get(record.key());
                if (watermark == null || report.getSequence() > watermark) {
                    watermarks.put(record.key(), report.getSequence());
                }
            }
        }
    }
}
