package io.devhealth.collector.publish;

import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceReportEnvelope;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeHeartbeat;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistryClient;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes to Kafka, keyed by node name, with an idempotent producer (acks=all): per-node order is
 * kept and a retried send is not duplicated by the broker.
 */
public final class KafkaReportPublisher implements ReportPublisher {

    private static final Logger LOGGER = LoggerFactory.getLogger(KafkaReportPublisher.class);

    private final String node;
    private final Topics topics;
    private final KafkaProducer<String, byte[]> producer;
    private final Serializer<DeviceReportEnvelope> reportSerializer;
    private final Serializer<NodeAllocations> allocationsSerializer;
    private final long epoch;
    private final AtomicLong sequence = new AtomicLong();

    public KafkaReportPublisher(String node, Topics topics, Map<String, Object> clientProperties,
                                SchemaRegistryClient registry, Clock clock) {
        this.node = node;
        this.topics = topics;
        Map<String, Object> props = new HashMap<>(clientProperties);
        props.putIfAbsent(ProducerConfig.ACKS_CONFIG, "all");
        props.putIfAbsent(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, 5);
        props.putIfAbsent(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        props.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, "devhealth-collector-" + node);
        this.producer = new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer());
        this.reportSerializer = AvroSerde.of(DeviceReportEnvelope.class, registry).serializer();
        this.allocationsSerializer = AvroSerde.of(NodeAllocations.class, registry).serializer();
        // A new epoch per process start: sequences restart at 0, and (epoch, sequence) stays unique.
        this.epoch = clock.millis();
    }

    @Override
    public void publish(DeviceHealthReport report) {
        report.setCollectorEpoch(epoch);
        report.setSequence(sequence.incrementAndGet());
        send(topics.deviceReports(), reportSerializer.serialize(topics.deviceReports(), new DeviceReportEnvelope(report)));
    }

    @Override
    public void publish(NodeHeartbeat heartbeat) {
        heartbeat.setCollectorEpoch(epoch);
        heartbeat.setSequence(sequence.incrementAndGet());
        send(topics.deviceReports(), reportSerializer.serialize(topics.deviceReports(), new DeviceReportEnvelope(heartbeat)));
    }

    @Override
    public void publish(NodeAllocations allocations) {
        allocations.setCollectorEpoch(epoch);
        allocations.setSequence(sequence.incrementAndGet());
        send(topics.nodeAllocations(), allocationsSerializer.serialize(topics.nodeAllocations(), allocations));
    }

    private void send(String topic, byte[] value) {
        producer.send(new ProducerRecord<>(topic, node, value), (metadata, error) -> {
            if (error != null) {
                LOGGER.error("publish failed topic={} node={} error=\"{}\"", topic, node, error.toString());
            }
        });
    }

    public void flush() {
        producer.flush();
    }

    @Override
    public void close() {
        producer.close();
    }
}
