package io.devhealth.schema.serde;

import java.io.IOException;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DatumReader;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads Confluent-framed Avro records into one generated record type, whatever schema version
 * wrote them.
 *
 * <p>Each record names its writer schema by id. The deserializer fetches that schema once (the
 * registry client caches it) and decodes with Avro schema resolution into {@code T}'s own schema,
 * so a consumer built against a newer schema reads older data (defaults fill new fields) and one
 * built against an older schema reads newer data (unknown fields are skipped, unknown enum symbols
 * become the enum's default, e.g. {@code UNKNOWN} / {@code OTHER}).
 *
 * <p>Failure contract: bytes that cannot become a {@code T} are a {@link SerializationException} with
 * the topic, the schema id and the reason, so that the caller can route the record to the
 * dead-letter topic: wrong magic byte, payload shorter than the header, an id the registry does not
 * know (404), a writer schema that cannot be resolved into {@code T}, a corrupt or trailing body.
 * A registry that is down is not the record's fault: that {@link SchemaRegistryException} is
 * rethrown as is. A {@link SecurityException} from Avro's class check is a deployment error and is
 * not wrapped either; {@link AvroTrust} prevents it for devhealth's classes.
 *
 * <p>{@code null} deserialises to {@code null} (tombstones). Thread-safe.
 */
public final class AvroDeserializer<T extends SpecificRecord> implements Deserializer<T> {

    private static final Logger LOGGER = LoggerFactory.getLogger(AvroDeserializer.class);

    private Class<T> type;
    private SchemaRegistryClient registry;
    private Schema readerSchema;
    private SpecificData model;
    private final Map<Integer, DatumReader<T>> readersBySchemaId = new ConcurrentHashMap<>();

    /** For Kafka's reflective instantiation; {@link #configure} must follow. */
    public AvroDeserializer() {
        AvroTrust.install();
    }

    /** A ready deserializer into {@code type}. */
    public AvroDeserializer(Class<T> type, SchemaRegistryClient registry) {
        AvroTrust.install();
        this.registry = Objects.requireNonNull(registry, "registry");
        init(Objects.requireNonNull(type, "type"));
    }

    /**
     * Reads {@link AvroSerde#SCHEMA_REGISTRY_URL_CONFIG} and {@link AvroSerde#AVRO_CLASS_CONFIG}; a type
     * or registry given to the constructor wins.
     */
    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        if (registry == null) {
            registry = SerdeConfiguration.registry(configs);
        }
        if (type == null) {
            init(SerdeConfiguration.<T>recordClass(configs));
        }
    }

    private void init(Class<T> recordType) {
        this.type = recordType;
        this.model = SpecificData.getForClass(recordType);
        this.readerSchema = model.getSchema(recordType);
    }

    @Override
    public T deserialize(String topic, byte[] data) {
        if (data == null) {
            return null;
        }
        if (model == null) {
            throw new IllegalStateException("AvroDeserializer is not configured: call configure() or use the "
                    + "constructor with a type and a registry");
        }
        int id = ConfluentWireFormat.readSchemaId(data, topic);
        DatumReader<T> reader = readerFor(id, topic);
        BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(data, ConfluentWireFormat.HEADER_LENGTH,
                data.length - ConfluentWireFormat.HEADER_LENGTH, null);
        T value;
        try {
            value = reader.read(null, decoder);
            if (!decoder.isEnd()) {
                throw new SerializationException("Record of topic " + topic + " with schema id " + id
                        + " has bytes left after the " + type.getSimpleName() + " body");
            }
        } catch (SerializationException | SecurityException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw new SerializationException("Cannot decode record of topic " + topic + " with schema id " + id
                    + " into " + type.getSimpleName() + ": " + e, e);
        }
        return value;
    }

    private DatumReader<T> readerFor(int id, String topic) {
        DatumReader<T> cached = readersBySchemaId.get(id);
        if (cached != null) {
            return cached;
        }
        Schema writerSchema;
        try {
            writerSchema = registry.getById(id);
        } catch (SchemaRegistryException e) {
            if (e.isNotFound()) {
                throw new SerializationException("Unknown schema id " + id + " in record of topic " + topic
                        + ": the registry has no such schema", e);
            }
            throw e;
        }
        DatumReader<T> reader = new SpecificDatumReader<>(writerSchema, readerSchema, model);
        readersBySchemaId.putIfAbsent(id, reader);
        LOGGER.debug("Reader prepared topic={} schemaId={} writer={} reader={}", topic, id,
                writerSchema.getFullName(), readerSchema.getFullName());
        return reader;
    }

    /** The reader schema: the one {@code T} was generated from. */
    public Schema schema() {
        return readerSchema;
    }
}
