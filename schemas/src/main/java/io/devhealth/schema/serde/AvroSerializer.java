package io.devhealth.schema.serde;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DatumWriter;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one generated Avro record type in the Confluent wire format ({@link ConfluentWireFormat}).
 *
 * <p>The writer schema is always the schema {@code T} was generated from. It is registered under the
 * topic's subject ({@link TopicNameStrategy}) the first time each topic is written, and the id is
 * cached, so the registry is called once per topic, not once per record. With
 * {@link #AUTO_REGISTER_SCHEMAS_CONFIG} {@code false} the id is only looked up, for deployments
 * where a pipeline step owns registration.
 *
 * <p>{@code null} serialises to {@code null}: a tombstone on a compacted topic.
 *
 * <p>Failures: a record Avro cannot encode (a required field left null, say) becomes a
 * {@link SerializationException}; a registry failure stays a {@link SchemaRegistryException}
 * (409: the schema broke the subject's compatibility rule; 5xx or no status: registry down).
 *
 * <p>Thread-safe, as Kafka requires of a producer's serializer.
 */
public final class AvroSerializer<T extends SpecificRecord> implements Serializer<T> {

    private static final Logger LOGGER = LoggerFactory.getLogger(AvroSerializer.class);

    /** Register the writer schema when missing (default {@code true}); Confluent's key. */
    public static final String AUTO_REGISTER_SCHEMAS_CONFIG = "auto.register.schemas";

    private Class<T> type;
    private SchemaRegistryClient registry;
    private boolean isKey;
    private boolean autoRegister = true;
    private Schema schema;
    private DatumWriter<T> writer;
    private final Map<String, Integer> idsByTopic = new ConcurrentHashMap<>();
    /**
     * One encoder per thread, re-aimed at each record's stream: a new one per record allocates and
     * drops its 2 KiB buffer every time (a processor writes every transition and pod status three times:
     * to its store, its history and its topic). Avro's own reuse idiom; per thread, because Kafka may
     * call a serializer from several.
     */
    private final ThreadLocal<BinaryEncoder> encoders = new ThreadLocal<>();

    /** For Kafka's reflective instantiation; {@link #configure} must follow. */
    public AvroSerializer() {
    }

    /** A ready serializer for record values ({@code isKey=false}) or keys. */
    public AvroSerializer(Class<T> type, SchemaRegistryClient registry, boolean isKey) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.isKey = isKey;
        init(Objects.requireNonNull(type, "type"));
    }

    /**
     * Reads {@link AvroSerde#SCHEMA_REGISTRY_URL_CONFIG}, {@link AvroSerde#AVRO_CLASS_CONFIG} and
     * {@link #AUTO_REGISTER_SCHEMAS_CONFIG}; a type or registry given to the constructor wins.
     */
    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        this.isKey = isKey;
        this.autoRegister = SerdeConfiguration.autoRegister(configs);
        if (registry == null) {
            registry = SerdeConfiguration.registry(configs);
        }
        if (type == null) {
            init(SerdeConfiguration.<T>recordClass(configs));
        }
        idsByTopic.clear();
    }

    private void init(Class<T> recordType) {
        SpecificData model = SpecificData.getForClass(recordType);
        this.type = recordType;
        this.schema = model.getSchema(recordType);
        this.writer = new SpecificDatumWriter<>(schema, model);
    }

    @Override
    public byte[] serialize(String topic, T data) {
        if (data == null) {
            return null;
        }
        if (writer == null) {
            throw new IllegalStateException("AvroSerializer is not configured: call configure() or use the "
                    + "constructor with a type and a registry");
        }
        if (!type.isInstance(data)) {
            throw new SerializationException("Record for topic " + topic + " is a " + data.getClass().getName()
                    + ", but this serializer writes " + type.getName());
        }
        int id = schemaId(topic);
        ByteArrayOutputStream out = new ByteArrayOutputStream(128);
        out.writeBytes(ConfluentWireFormat.header(id));
        try {
            BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, encoders.get());
            encoders.set(encoder);
            writer.write(data, encoder);
            encoder.flush();
        } catch (IOException | RuntimeException e) {
            throw new SerializationException("Cannot encode " + type.getSimpleName() + " for topic " + topic
                    + " with schema id " + id + ": " + e, e);
        }
        return out.toByteArray();
    }

    private int schemaId(String topic) {
        if (topic == null) {
            throw new SerializationException("A topic is needed to name the schema subject of " + type.getName());
        }
        Integer cached = idsByTopic.get(topic);
        if (cached != null) {
            return cached;
        }
        String subject = TopicNameStrategy.subjectName(topic, isKey);
        int id = autoRegister ? registry.register(subject, schema) : registry.lookupId(subject, schema);
        idsByTopic.put(topic, id);
        LOGGER.debug("Writer schema id cached topic={} subject={} id={} autoRegister={}", topic, subject, id,
                autoRegister);
        return id;
    }

    /** The writer schema: the one {@code T} was generated from. */
    public Schema schema() {
        return schema;
    }
}
