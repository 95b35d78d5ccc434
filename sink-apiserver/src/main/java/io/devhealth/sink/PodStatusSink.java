package io.devhealth.sink;

import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistryClient;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import io.fabric8.kubernetes.client.KubernetesClientException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.errors.RecordDeserializationException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumes pod-device-status and writes each pod's latest status, committing offsets only after
 * the writes of a batch are done (or decided dropped), so a crash re-writes rather than loses.
 */
public final class PodStatusSink implements Runnable, AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(PodStatusSink.class);

    private final SinkConfig config;
    private final KafkaConsumer<String, PodDeviceStatus> consumer;
    private final PodStatusWriter writer;
    private final AtomicBoolean running = new AtomicBoolean(true);

    public PodStatusSink(SinkConfig config, SchemaRegistryClient registry, PodStatusWriter writer) {
        this.config = config;
        this.writer = writer;
        Map<String, Object> props = new HashMap<>(config.kafkaClientProperties());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, config.groupId());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.putIfAbsent(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.putIfAbsent(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        this.consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                AvroSerde.of(PodDeviceStatus.class, registry).deserializer());
    }

    @Override
    public void run() {
        consumer.subscribe(List.of(config.topics().podDeviceStatus()));
        try {
            while (running.get()) {
                ConsumerRecords<String, PodDeviceStatus> records;
                try {
                    records = consumer.poll(Duration.ofMillis(500));
                } catch (RecordDeserializationException e) {
                    LOGGER.error("undecodable pod status skipped topic={} partition={} offset={} error=\"{}\"",
                            e.topicPartition().topic(), e.topicPartition().partition(), e.offset(), e.getMessage());
                    consumer.seek(e.topicPartition(), e.offset() + 1);
                    continue;
                }
                // Only the latest status of each pod in a batch matters.
                Map<String, PodDeviceStatus> latest = new LinkedHashMap<>();
                for (ConsumerRecord<String, PodDeviceStatus> record : records) {
                    if (record.value() != null) {
                        latest.merge(record.key(), record.value(), (a, b) -> b.getVersion() >= a.getVersion() ? b : a);
                    }
                }
                for (PodDeviceStatus status : latest.values()) {
                    try {
                        writer.write(status);
                    } catch (KubernetesClientException e) {
                        // Error classes (retry with backoff, dead-letter on 422, pause when unreachable)
                        // are the sink issue's work; until then a failed write is logged and dropped.
                        LOGGER.error("pod status write failed pod={} version={} code={} error=\"{}\"",
                                status.getPod().getNamespace() + "/" + status.getPod().getName(), status.getVersion(), e.getCode(), e.getMessage());
                    }
                }
                if (!records.isEmpty()) {
                    consumer.commitSync();
                }
            }
        } catch (WakeupException e) {
            if (running.get()) {
                throw e;
            }
        } finally {
            consumer.close();
        }
    }

    @Override
    public void close() {
        running.set(false);
        consumer.wakeup();
    }
}
