package io.devhealth.collector.publish;

import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.DeviceReportEnvelope;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.schema.serde.SchemaRegistryClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads, from the start, the topic a collector in {@code layout} writes its device reports and
 * heartbeats to (node-events, or device-reports in the three-topics layout), for the delivery tests.
 */
final class DeliveredReports implements AutoCloseable {

    /** One consumed record: its payload (a report, heartbeat, …) and the identity headers the sender wrote. */
    record Delivered(String topic, String key, Object payload, long epochHeader, long sequenceHeader) {}

    private final KafkaConsumer<String, byte[]> consumer;
    private final Function<ConsumerRecord<String, byte[]>, Object> payload;
    private final List<Delivered> delivered = new ArrayList<>();

    DeliveredReports(Map<String, Object> clientProperties, String registryUrl, Topics topics, PublishLayout layout) {
        SchemaRegistryClient registry = SchemaRegistries.fromUrl(registryUrl);
        String topic;
        if (layout == PublishLayout.NODE_EVENTS) {
            topic = topics.nodeEvents();
            var events = AvroSerde.of(NodeEvent.class, registry).deserializer();
            payload = r -> events.deserialize(r.topic(), r.headers(), r.value()).getPayload();
        } else {
            topic = topics.deviceReports();
            var envelopes = AvroSerde.of(DeviceReportEnvelope.class, registry).deserializer();
            payload = r -> envelopes.deserialize(r.topic(), r.headers(), r.value()).getPayload();
        }
        Map<String, Object> props = new HashMap<>(clientProperties);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        consumer = new KafkaConsumer<>(props, new StringDeserializer(), new ByteArrayDeserializer());
        // Assigned, not subscribed: a group rebalance while the broker restarts would reset to "earliest" and read twice.
        List<TopicPartition> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
                .map(p -> new TopicPartition(topic, p.partition())).toList();
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
    }

    /** Polls once more and returns everything read so far. */
    synchronized List<Delivered> poll() {
        for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(200))) {
            delivered.add(new Delivered(record.topic(), record.key(), payload.apply(record),
                    Long.parseLong(new String(record.headers().lastHeader(KafkaSpoolSender.EPOCH_HEADER).value(), StandardCharsets.US_ASCII)),
                    Long.parseLong(new String(record.headers().lastHeader(KafkaSpoolSender.SEQUENCE_HEADER).value(), StandardCharsets.US_ASCII))));
        }
        return List.copyOf(delivered);
    }

    /** How many records {@code topics} hold, summed over their partitions (end offsets: nothing is ever deleted here). */
    static long recordsIn(Map<String, Object> clientProperties, List<String> topics) {
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(new HashMap<>(clientProperties),
                new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (String topic : topics) {
                consumer.partitionsFor(topic, Duration.ofSeconds(30)).forEach(p -> partitions.add(new TopicPartition(topic, p.partition())));
            }
            return consumer.endOffsets(partitions).values().stream().mapToLong(Long::longValue).sum();
        }
    }

    @Override
    public void close() {
        consumer.close(Duration.ofSeconds(2));
    }
}
