/**
 * Kafka serialisation of the devhealth Avro records in the Confluent wire format, and the schema
 * registry clients it needs.
 *
 * <p>Why a project serde: Confluent's own serializer is not on Maven Central, and Apicurio's serde
 * drags in an older kafka-clients, Avro and a Vert.x stack. The Confluent framing (magic byte
 * {@code 0x00}, 4-byte big-endian schema id, Avro binary body) is small enough to own, and every
 * registry devhealth may meet (Confluent, Apicurio {@code /apis/ccompat/v7}, Karapace, Redpanda)
 * speaks the Confluent REST API.
 *
 * <p>Entry points:
 * <ul>
 *   <li>{@link io.devhealth.schema.serde.AvroSerde} (with {@link io.devhealth.schema.serde.AvroSerializer}
 *       and {@link io.devhealth.schema.serde.AvroDeserializer}) for Kafka clients and Kafka Streams;</li>
 *   <li>{@link io.devhealth.schema.serde.SchemaRegistries#fromUrl} to obtain a registry client for a
 *       {@code mem://name} or {@code http(s)://} URL;</li>
 *   <li>{@link io.devhealth.schema.serde.AvroTrust} for Avro 1.12.2's trusted-class check.</li>
 * </ul>
 *
 * <p>Error contract: {@link org.apache.kafka.common.errors.SerializationException} means the bytes
 * (or the record) are bad and will stay bad, so callers route them to the dead-letter topic;
 * {@link io.devhealth.schema.serde.SchemaRegistryException} that is not a 404 means the registry is
 * unreachable or refused a registration, which retrying or an operator can fix.
 */
package io.devhealth.schema.serde;
