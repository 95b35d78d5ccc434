package io.devhealth.sink;

import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistryClient;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The sink's producers (dead letters, verdicts): every record they send is waited for before the sink
 * moves on (an offset committed, a record frozen), so each one is idempotent with {@code acks=all}, and
 * its Avro serializer registers schemas only where the configuration allows it (production registers
 * them ahead and gives the sink a read-only registry credential).
 */
public final class SinkProducers {

    private SinkProducers() {}

    /** @param client what this producer is for, appended to the sink's group id as its client id */
    public static <T extends SpecificRecord> Producer<String, T> acknowledged(SinkConfig config, SchemaRegistryClient registry, Class<T> type,
            String client) {
        Map<String, Object> props = new HashMap<>(config.kafkaClientProperties());
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, config.groupId() + "-" + client);
        return new KafkaProducer<>(props, new StringSerializer(),
                AvroSerde.of(type, registry, false, config.autoRegisterSchemas()).serializer());
    }

    /**
     * Sends and waits for the acknowledgement.
     *
     * @throws ExecutionException what the broker or the producer answered instead (its cause)
     * @throws KafkaException when the wait was interrupted (the interrupt is kept), or what {@code send}
     *         itself threw (the value could not be serialized, the producer is closed)
     */
    public static <T> void sendAndWait(Producer<String, T> producer, ProducerRecord<String, T> record, String what) throws ExecutionException {
        try {
            producer.send(record).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KafkaException("interrupted while publishing " + what, e);
        }
    }
}
