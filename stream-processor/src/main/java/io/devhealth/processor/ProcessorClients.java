package io.devhealth.processor;

import io.devhealth.processor.internals.AbortFencingProducer;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.KafkaClientSupplier;

/**
 * The Kafka clients the processor's Kafka Streams runs on: Kafka's own, each stream thread's producer behind
 * an {@link AbortFencingProducer} (an aborted transaction rewinds every task of its thread). Whatever runs the
 * topology (the processor, the benchmarks) runs it on these.
 */
public class ProcessorClients implements KafkaClientSupplier {

    /** Transactions whose abort fenced their producer, over every producer made here. */
    private final AtomicLong fencedTransactions = new AtomicLong();

    @Override
    public Admin getAdmin(Map<String, Object> config) {
        return Admin.create(config);
    }

    @Override
    public final Producer<byte[], byte[]> getProducer(Map<String, Object> config) {
        return new AbortFencingProducer(newProducer(config), String.valueOf(config.get(ProducerConfig.CLIENT_ID_CONFIG)),
                fencedTransactions::incrementAndGet);
    }

    /** How many aborted transactions fenced their producer (each rewound a stream thread's tasks). */
    public long fencedTransactions() {
        return fencedTransactions.get();
    }

    /** The producer behind the fence. */
    Producer<byte[], byte[]> newProducer(Map<String, Object> config) {
        return new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer());
    }

    @Override
    public Consumer<byte[], byte[]> getConsumer(Map<String, Object> config) {
        return consumer(config);
    }

    @Override
    public Consumer<byte[], byte[]> getRestoreConsumer(Map<String, Object> config) {
        return consumer(config);
    }

    @Override
    public Consumer<byte[], byte[]> getGlobalConsumer(Map<String, Object> config) {
        return consumer(config);
    }

    static Consumer<byte[], byte[]> consumer(Map<String, Object> config) {
        return new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }
}
