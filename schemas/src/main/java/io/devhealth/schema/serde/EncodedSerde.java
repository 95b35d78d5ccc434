package io.devhealth.schema.serde;

import java.util.Objects;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/**
 * The serde of {@link Encoded} records of one Avro type: writing returns the bytes the record carries
 * (no encoding), reading decodes with the Avro deserializer and keeps the bytes read. Records enter as
 * {@link #encode} makes them (the one place they are encoded) or as read.
 *
 * <p>Failures are the Avro serde's: bytes that do not decode are a {@code SerializationException} when
 * read, as with {@link AvroDeserializer}.
 */
public final class EncodedSerde<T extends SpecificRecord> implements Serde<Encoded<T>> {

    private final Serializer<T> encoder;
    private final Deserializer<T> decoder;

    private EncodedSerde(Serde<T> avro) {
        this.encoder = avro.serializer();
        this.decoder = avro.deserializer();
    }

    /** @param avro the serde that encodes and decodes the records (its caches are shared) */
    public static <T extends SpecificRecord> EncodedSerde<T> over(Serde<T> avro) {
        return new EncodedSerde<>(Objects.requireNonNull(avro, "avro"));
    }

    /**
     * {@code value} encoded once, for {@code topic}'s subject (its schema id is looked up or registered as the
     * Avro serializer does for that topic); null for null.
     */
    public Encoded<T> encode(String topic, T value) {
        return value == null ? null : new Encoded<>(value, encoder.serialize(topic, value));
    }

    @Override
    public Serializer<Encoded<T>> serializer() {
        return (topic, encoded) -> encoded == null ? null : encoded.bytes();
    }

    @Override
    public Deserializer<Encoded<T>> deserializer() {
        return (topic, bytes) -> bytes == null ? null : new Encoded<>(decoder.deserialize(topic, bytes), bytes);
    }
}
