package io.devhealth.processor;

import io.devhealth.runtime.security.RecordAuthenticationException;
import io.devhealth.schema.avro.DeadLetter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.DeserializationExceptionHandler;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProcessingExceptionHandler;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bad input never stops the processor and is never silently dropped: a record that
 * cannot be decoded, or that decodes but is invalid, becomes a {@link DeadLetter} on the dead-letter
 * topic with its original key and value bytes, its topic/partition/offset, the reason and the error
 * class; a counter and a log line say so; processing continues with the next record.
 *
 * <p>The dead letter is handed back to Kafka Streams in the handler's response (KIP-1034), so it is
 * produced in the same transaction as the input offset under exactly-once: it is written exactly
 * when the record is skipped. Failures that are not about the record (state stores, the schema
 * registry being unreachable) still fail the task, to be retried after the thread is replaced.
 *
 * <p>Configured through the Streams properties ({@link #configure(Properties, String, Serializer, MeterRegistry, Collection)}).
 *
 * <p>Counted in {@code devhealth.processor.dead.letters}{kind, topic}. Every kind an input can produce
 * is registered at 0 before the first record: an alert on {@code increase()} sees a dead letter only
 * as a rise from an earlier sample, and a series born with its first dead letter has none.
 * {@value #DESERIALIZATION} and {@value #INVALID} are registered here for every input topic,
 * {@value #AUTHENTICATION} by the deserializer that checks a topic's signatures
 * ({@code SignedRecordDeserializer}), for that topic only and only where signatures are checked.
 */
public final class DeadLetterHandler implements DeserializationExceptionHandler, ProcessingExceptionHandler {

    private static final Logger LOGGER = LoggerFactory.getLogger(DeadLetterHandler.class);

    public static final String TOPIC_CONFIG = "devhealth.dead.letter.topic";
    public static final String SERIALIZER_CONFIG = "devhealth.dead.letter.serializer";
    public static final String METERS_CONFIG = "devhealth.meter.registry";
    public static final String CLOCK_CONFIG = "devhealth.clock";
    static final String STAGE = "processor";
    static final String METER = "devhealth.processor.dead.letters";
    /** A record whose bytes do not decode. */
    public static final String DESERIALIZATION = "deserialization";
    /** A record that decodes but that processing refused. */
    public static final String INVALID = "invalid";
    /** A record whose node signature did not verify. */
    public static final String AUTHENTICATION = "authentication";

    private String topic;
    private Serializer<DeadLetter> serializer;
    private MeterRegistry meters;
    private Clock clock;

    /**
     * Installs this handler for undecodable and invalid records in {@code streamsProperties}, and starts
     * the counts of both at 0 for each of {@code inputTopics} (the topology's,
     * {@link DeviceHealthTopology#inputTopics}).
     */
    public static void configure(Properties streamsProperties, String topic, Serializer<DeadLetter> serializer, MeterRegistry meters,
                                 Collection<String> inputTopics) {
        for (String inputTopic : inputTopics) {
            counter(meters, DESERIALIZATION, inputTopic);
            counter(meters, INVALID, inputTopic);
        }
        streamsProperties.put(StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG, DeadLetterHandler.class.getName());
        streamsProperties.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG, DeadLetterHandler.class.getName());
        streamsProperties.put(TOPIC_CONFIG, topic);
        streamsProperties.put(SERIALIZER_CONFIG, serializer);
        streamsProperties.put(METERS_CONFIG, meters);
    }

    @Override
    @SuppressWarnings("unchecked")
    public void configure(Map<String, ?> configs) {
        Object configuredTopic = configs.get(TOPIC_CONFIG);
        Object configuredSerializer = configs.get(SERIALIZER_CONFIG);
        if (!(configuredTopic instanceof String) || !(configuredSerializer instanceof Serializer<?>)) {
            throw new ConfigException("DeadLetterHandler needs " + TOPIC_CONFIG + " and " + SERIALIZER_CONFIG
                    + "; install it with DeadLetterHandler.configure(...)");
        }
        topic = (String) configuredTopic;
        serializer = (Serializer<DeadLetter>) configuredSerializer;
        meters = configs.get(METERS_CONFIG) instanceof MeterRegistry registry ? registry : new SimpleMeterRegistry();
        clock = configs.get(CLOCK_CONFIG) instanceof Clock configured ? configured : Clock.systemUTC();
    }

    @Override
    public DeserializationExceptionHandler.Response handleError(ErrorHandlerContext context, ConsumerRecord<byte[], byte[]> record,
                                                              Exception exception) {
        // A record refused by the node signature check decoded fine: say what it is (and count it apart).
        boolean unauthenticated = exception instanceof RecordAuthenticationException;
        ProducerRecord<byte[], byte[]> letter = deadLetter(record.topic(), record.partition(), record.offset(), record.key(),
                record.value(), (unauthenticated ? "unauthenticated record: " : "undecodable record: ") + describe(exception),
                exception, unauthenticated ? AUTHENTICATION : DESERIALIZATION);
        return DeserializationExceptionHandler.Response.resume(List.of(letter));
    }

    @Override
    public ProcessingExceptionHandler.Response handleError(ErrorHandlerContext context, Record<?, ?> record, Exception exception) {
        if (exception instanceof SerializationException || exception instanceof StreamsException) {
            // Not about this record: an output or a store failed. Failing lets the task retry it.
            LOGGER.error("processing failed, not a bad record topic={} partition={} offset={} error=\"{}\"", context.topic(),
                    context.partition(), context.offset(), exception.toString(), exception);
            return ProcessingExceptionHandler.Response.fail();
        }
        ProducerRecord<byte[], byte[]> letter = deadLetter(context.topic(), context.partition(), context.offset(),
                context.sourceRawKey(), context.sourceRawValue(), "invalid record: " + describe(exception), exception, INVALID);
        return ProcessingExceptionHandler.Response.resume(List.of(letter));
    }

    private ProducerRecord<byte[], byte[]> deadLetter(String sourceTopic, int partition, long offset, byte[] key, byte[] value,
                                                      String reason, Exception exception, String kind) {
        DeadLetter letter = DeadLetter.newBuilder()
                .setStage(STAGE)
                .setSourceTopic(sourceTopic)
                .setSourcePartition(partition < 0 ? null : partition)
                .setSourceOffset(offset < 0 ? null : offset)
                .setKey(key == null ? null : ByteBuffer.wrap(key))
                .setValue(value == null ? null : ByteBuffer.wrap(value))
                .setReason(reason)
                .setErrorClass(exception.getClass().getName())
                .setFailedAt(clock.instant())
                .build();
        counter(meters, kind, sourceTopic == null ? "none" : sourceTopic).increment();
        LOGGER.warn("dead letter topic={} partition={} offset={} reason=\"{}\"", sourceTopic, partition, offset, reason);
        return new ProducerRecord<>(topic, null, key, serializer.serialize(topic, letter));
    }

    /** The count of {@code kind} dead letters from {@code topic}, registered at 0 where it was not yet. */
    public static Counter counter(MeterRegistry meters, String kind, String topic) {
        return Counter.builder(METER)
                .description("Input records sent to the dead-letter topic instead of being processed")
                .tag("kind", kind)
                .tag("topic", topic)
                .register(meters);
    }

    private static String describe(Exception exception) {
        StringBuilder out = new StringBuilder(String.valueOf(exception.getMessage()));
        Throwable cause = exception.getCause();
        while (cause != null && cause != cause.getCause()) {
            out.append(" <- ").append(cause.getClass().getSimpleName()).append(": ").append(cause.getMessage());
            cause = cause.getCause();
        }
        return out.toString();
    }
}
