package io.devhealth.schema.serde;

import java.util.Map;
import java.util.Objects;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Serde;

/**
 * Kafka {@link Serde} for one generated Avro record type in the Confluent wire format (magic byte
 * {@code 0x00}, 4-byte big-endian schema id, Avro binary), with subjects named
 * {@code <topic>-value} / {@code <topic>-key}.
 *
 * <p>Two ways to build one:
 * <ul>
 *   <li>in code: {@code AvroSerde.of(NodeEvent.class, SchemaRegistries.fromUrl(url, config))};</li>
 *   <li>by Kafka from configuration: {@code new AvroSerde<>()} then {@code configure(map, isKey)} with
 *       {@link #SCHEMA_REGISTRY_URL_CONFIG} and {@link #AVRO_CLASS_CONFIG}. The same keys configure
 *       {@link AvroSerializer} and {@link AvroDeserializer} used on their own (e.g. as
 *       {@code value.serializer}).</li>
 * </ul>
 *
 * <p>Decoding never needs {@code -Dorg.apache.avro.SERIALIZABLE_PACKAGES}: see {@link AvroTrust}.
 * The inner serializer and deserializer are created once and shared, so their caches are too.
 */
public final class AvroSerde<T extends SpecificRecord> implements Serde<T> {

    /**
     * The registry: {@code mem://<name>} (tests and the embedded demo) or the Confluent-compatible
     * API root, e.g. {@code http://127.0.0.1:8080/apis/ccompat/v7}. Timeouts and credentials use the
     * keys of {@link RegistryClientConfig}.
     */
    public static final String SCHEMA_REGISTRY_URL_CONFIG = "schema.registry.url";

    /** Fully qualified name (or {@code Class}) of the generated record type, e.g. {@code io.devhealth.schema.avro.DeadLetter}. */
    public static final String AVRO_CLASS_CONFIG = "devhealth.avro.class";

    private final AvroSerializer<T> serializer;
    private final AvroDeserializer<T> deserializer;

    /** For Kafka's reflective instantiation; {@link #configure} must follow. */
    public AvroSerde() {
        this.serializer = new AvroSerializer<>();
        this.deserializer = new AvroDeserializer<>();
    }

    private AvroSerde(Class<T> type, SchemaRegistryClient registry, boolean isKey) {
        this.serializer = new AvroSerializer<>(type, registry, isKey);
        this.deserializer = new AvroDeserializer<>(type, registry);
    }

    /** A serde for record values of {@code type}. */
    public static <T extends SpecificRecord> AvroSerde<T> of(Class<T> type, SchemaRegistryClient registry) {
        return of(type, registry, false);
    }

    /** A serde for record keys ({@code isKey=true}, subject {@code <topic>-key}) or values of {@code type}. */
    public static <T extends SpecificRecord> AvroSerde<T> of(Class<T> type, SchemaRegistryClient registry,
            boolean isKey) {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(registry, "registry");
        return new AvroSerde<>(type, registry, isKey);
    }

    /**
     * A serde for record values of {@code type} whose serializer registers a missing writer schema only
     * when {@code autoRegister} ({@link AvroSerializer#AUTO_REGISTER_SCHEMAS_CONFIG}); otherwise it looks
     * the schema's id up and fails when it was not registered ahead.
     */
    public static <T extends SpecificRecord> AvroSerde<T> of(Class<T> type, SchemaRegistryClient registry,
            boolean isKey, boolean autoRegister) {
        AvroSerde<T> serde = of(type, registry, isKey);
        serde.serializer.configure(Map.of(AvroSerializer.AUTO_REGISTER_SCHEMAS_CONFIG, autoRegister), isKey);
        return serde;
    }

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        serializer.configure(configs, isKey);
        deserializer.configure(configs, isKey);
    }

    @Override
    public AvroSerializer<T> serializer() {
        return serializer;
    }

    @Override
    public AvroDeserializer<T> deserializer() {
        return deserializer;
    }
}
