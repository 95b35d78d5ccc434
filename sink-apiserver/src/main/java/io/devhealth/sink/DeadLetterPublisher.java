package io.devhealth.sink;

import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.serde.SchemaRegistryClient;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends records the sink cannot use to the dead-letter topic, with their original bytes, where they came
 * from, and why (for a rejected write: the API server's answer). Synchronous: the source offset is
 * committed only after the dead letter is acknowledged.
 */
public final class DeadLetterPublisher implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(DeadLetterPublisher.class);
    static final String STAGE = "sink";

    private final Producer<String, DeadLetter> producer;
    private final String topic;
    private final Clock clock;

    public DeadLetterPublisher(Producer<String, DeadLetter> producer, String topic, Clock clock) {
        this.producer = producer;
        this.topic = topic;
        this.clock = clock;
    }

    static DeadLetterPublisher create(SinkConfig config, SchemaRegistryClient registry, Clock clock) {
        return new DeadLetterPublisher(SinkProducers.acknowledged(config, registry, DeadLetter.class, "dlq"), config.topics().deadLetters(),
                clock);
    }

    /** Publishes and waits for the acknowledgement; throws {@link KafkaException} when Kafka does not take it. */
    public void publish(ConsumerRecord<String, byte[]> source, String reason, Throwable error) {
        DeadLetter letter = DeadLetter.newBuilder()
                .setStage(STAGE)
                .setSourceTopic(source.topic())
                .setSourcePartition(source.partition())
                .setSourceOffset(source.offset())
                .setKey(source.key() == null ? null : ByteBuffer.wrap(source.key().getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                .setValue(source.value() == null ? null : ByteBuffer.wrap(source.value()))
                .setReason(reason)
                .setErrorClass(error == null ? null : error.getClass().getName())
                .setFailedAt(clock.instant())
                .build();
        try {
            SinkProducers.sendAndWait(producer, new ProducerRecord<>(topic, source.key(), letter), "a dead letter");
        } catch (ExecutionException e) {
            throw new KafkaException("dead letter not acknowledged", e.getCause());
        }
        LOGGER.warn("record dead-lettered topic={} partition={} offset={} key={} dlq={} reason=\"{}\"", source.topic(),
                source.partition(), source.offset(), source.key(), topic, reason);
    }

    @Override
    public void close() {
        producer.close();
    }
}
