package io.devhealth.collector.publish;

import io.devhealth.schema.avro.DeviceReportEnvelope;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistries;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

/** Reads a device-reports topic from the start, for the delivery tests. */
final class DeliveredReports implements AutoCloseable {

    /** One consumed record with the identity headers the sender wrote. */
    record Delivered(String key, DeviceReportEnvelope value, long epochHeader, long sequenceHeader) {}

    private final KafkaConsumer<String, DeviceReportEnvelope> consumer;
    private final List<Delivered> delivered = new ArrayList<>();

    DeliveredReports(Map<String, Object> clientProperties, String registryUrl, String topic) {
        Map<String, Object> props = new java.util.HashMap<>(clientProperties);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                AvroSerde.of(DeviceReportEnvelope.class, SchemaRegistries.fromUrl(registryUrl)).deserializer());
        // Assigned, not subscribed: a group rebalance while the broker restarts would reset to "earliest" and read twice.
        List<org.apache.kafka.common.TopicPartition> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
                .map(p -> new org.apache.kafka.common.TopicPartition(topic, p.partition())).toList();
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
    }

    /** Polls once more and returns everything read so far. */
    synchronized List<Delivered> poll() {
        for (ConsumerRecord<String, DeviceReportEnvelope> record : consumer.poll(Duration.ofMillis(200))) {
            delivered.add(new Delivered(record.key(), record.value(),
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
