package io.devhealth.processor.internals;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The fence's rule, over Kafka's own {@link MockProducer}; what Kafka Streams makes of it is {@code AbortedTransactionIT}'s. */
class AbortFencingProducerTest {

    private final MockProducer<byte[], byte[]> kafka = new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
    private final AtomicInteger fences = new AtomicInteger();
    private final AbortFencingProducer producer = new AbortFencingProducer(kafka, "thread-1-producer", fences::incrementAndGet);

    @BeforeEach
    void init() {
        producer.initTransactions();
    }

    @Test
    void shouldRefuseTheNextTransactionAfterAnAbortThatTookRecords() {
        producer.beginTransaction();
        producer.send(record());
        producer.abortTransaction();

        assertThat(kafka.transactionAborted()).as("the abort reached Kafka's producer").isTrue();
        assertThatThrownBy(producer::beginTransaction).isInstanceOf(ProducerFencedException.class)
                .hasMessageContaining("thread-1-producer");
        assertThatThrownBy(producer::beginTransaction).as("for good: Kafka Streams replaces the producer").isInstanceOf(ProducerFencedException.class);
        assertThat(fences).as("fences told").hasValue(1);
    }

    @Test
    void shouldRefuseTheNextTransactionAlsoWhenTheAbortFailed() {
        producer.beginTransaction();
        producer.send(record());
        kafka.abortTransactionException = new TimeoutException("abort timed out");

        assertThatThrownBy(producer::abortTransaction).isInstanceOf(TimeoutException.class);
        assertThatThrownBy(producer::beginTransaction).isInstanceOf(ProducerFencedException.class);
        assertThat(fences).hasValue(1);
    }

    @Test
    void shouldGoOnAfterAnAbortOfATransactionWithoutRecords() {
        producer.beginTransaction();
        producer.sendOffsetsToTransaction(Map.of(new TopicPartition("in", 0), new OffsetAndMetadata(1)), new ConsumerGroupMetadata("app"));
        producer.abortTransaction();

        producer.beginTransaction();
        producer.send(record());
        producer.commitTransaction();
        assertThat(kafka.history()).hasSize(1);
        assertThat(fences).hasValue(0);
    }

    @Test
    void shouldForgetRecordsOnceTheirTransactionCommitted() {
        producer.beginTransaction();
        producer.send(record());
        producer.commitTransaction();
        producer.beginTransaction();
        producer.abortTransaction();

        producer.beginTransaction();
        assertThat(kafka.transactionInFlight()).isTrue();
    }

    private static ProducerRecord<byte[], byte[]> record() {
        return new ProducerRecord<>("out", new byte[] {1}, new byte[] {2});
    }
}
