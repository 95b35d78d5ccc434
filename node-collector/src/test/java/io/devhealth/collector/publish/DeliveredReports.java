package io.devhealth.collector.publish;

import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.testkit.kafka.TopicReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.IntPredicate;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/** node-events as the delivery tests check them: read from the start ({@link TopicReader}), each record decoded. */
final class DeliveredReports implements AutoCloseable {

    /** One consumed record: its payload (a report, heartbeat, …) and the identity headers the sender wrote. */
    record Delivered(String topic, String key, Object payload, long epochHeader, long sequenceHeader) {}

    private final TopicReader<String, byte[]> reader;
    private final Deserializer<NodeEvent> events;

    DeliveredReports(Map<String, Object> clientProperties, String registryUrl, Topics topics) {
        events = AvroSerde.of(NodeEvent.class, SchemaRegistries.fromUrl(registryUrl)).deserializer();
        // TopicReader assigns, it does not subscribe: a group rebalance while the broker restarts would reset to
        // "earliest" and read twice.
        reader = TopicReader.of(clientProperties, topics.nodeEvents()).readUncommitted()
                .deserializers(new StringDeserializer(), new ByteArrayDeserializer()).open();
    }

    /** Reads until the number of records read so far satisfies {@code count}; returns them all, decoded. */
    List<Delivered> readUntil(IntPredicate count, Duration timeout) {
        return decoded(reader.readUntil(read -> count.test(read.size()), timeout));
    }

    /** Polls once more and returns everything read so far, decoded. */
    List<Delivered> poll() {
        return decoded(reader.poll());
    }

    private List<Delivered> decoded(List<ConsumerRecord<String, byte[]>> records) {
        return records.stream().map(r -> new Delivered(r.topic(), r.key(), events.deserialize(r.topic(), r.headers(), r.value()).getPayload(),
                header(r, KafkaSpoolSender.EPOCH_HEADER), header(r, KafkaSpoolSender.SEQUENCE_HEADER))).toList();
    }

    private static long header(ConsumerRecord<String, byte[]> record, String name) {
        return Long.parseLong(new String(record.headers().lastHeader(name).value(), StandardCharsets.US_ASCII));
    }

    @Override
    public void close() {
        reader.close();
    }
}
