package io.devhealth.schema.serde;

import java.util.Map;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.config.ConfigException;

/**
 * Reads the serde's settings from the map Kafka passes to {@code configure}, so that the
 * serializer and the deserializer interpret the keys documented on {@link AvroSerde} identically.
 */
final class SerdeConfiguration {

    private SerdeConfiguration() {
    }

    /** The registry named by {@link AvroSerde#SCHEMA_REGISTRY_URL_CONFIG}. */
    static SchemaRegistryClient registry(Map<String, ?> configs) {
        Object url = configs.get(AvroSerde.SCHEMA_REGISTRY_URL_CONFIG);
        if (url == null || url.toString().isBlank()) {
            throw new ConfigException("Missing " + AvroSerde.SCHEMA_REGISTRY_URL_CONFIG
                    + " (mem://<name> for tests and the demo, or the registry's http(s) URL)");
        }
        try {
            return SchemaRegistries.fromUrl(url.toString(), configs);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage());
        }
    }

    /** The generated record class named by {@link AvroSerde#AVRO_CLASS_CONFIG}. */
    @SuppressWarnings("unchecked")
    static <T extends SpecificRecord> Class<T> recordClass(Map<String, ?> configs) {
        Object value = configs.get(AvroSerde.AVRO_CLASS_CONFIG);
        if (value == null) {
            throw new ConfigException("Missing " + AvroSerde.AVRO_CLASS_CONFIG
                    + " (the generated Avro class, e.g. io.devhealth.schema.avro.NodeEvent)");
        }
        Class<?> type;
        if (value instanceof Class<?> given) {
            type = given;
        } else {
            try {
                ClassLoader loader = Thread.currentThread().getContextClassLoader();
                type = Class.forName(value.toString().trim(), true,
                        loader != null ? loader : SerdeConfiguration.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new ConfigException(AvroSerde.AVRO_CLASS_CONFIG, value, "class not found");
            }
        }
        if (!SpecificRecord.class.isAssignableFrom(type)) {
            throw new ConfigException(AvroSerde.AVRO_CLASS_CONFIG, value, "not a generated Avro SpecificRecord class");
        }
        return (Class<T>) type;
    }

    /** {@link AvroSerializer#AUTO_REGISTER_SCHEMAS_CONFIG}, default true. */
    static boolean autoRegister(Map<String, ?> configs) {
        Object value = configs.get(AvroSerializer.AUTO_REGISTER_SCHEMAS_CONFIG);
        return value == null || Boolean.parseBoolean(value.toString().trim());
    }
}
