package io.devhealth.collector.publish;

import io.devhealth.schema.Topics;
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

/** Reads node-events from the start, for the delivery tests. */
final class DeliveredReports implements AutoCloseable {

    /** One consumed record: its payload (a report, heartbeat, …) and the identity headers the sender wrote. */
    record Delivered(String topic, String key, Object payload, long epochHeader, long sequenceHeader) {}

    private final KafkaConsumer<String, byte[]> consumer;
    private final Function<ConsumerRecord<String, byte[]>, Object> payload;
    private final List<Delivered> delivered = new ArrayList<>();

    DeliveredReports(Map<String, Object> clientProperties, String registryUrl, Topics topics) {
        SchemaRegistryClient registry = SchemaRegistries.fromUrl(registryUrl);
        String topic = topics.nodeEvents();
        var events = AvroSerde.of(NodeEvent.class, registry).deserializer();
        payload = r -> events.deserialize(r.topic(), r.headers(), r.value()).getPayload();
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

    @Override
    public void close() {
        consumer.close(Duration.ofSeconds(2));
    }
}
