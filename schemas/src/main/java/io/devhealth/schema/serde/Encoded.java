package io.devhealth.schema.serde;

import java.util.Objects;

/**
 * A record together with its bytes in the Confluent wire format: the bytes it was decoded from, or the
 * bytes it was encoded to once. {@link EncodedSerde} writes the bytes as they are wherever the record
 * goes (a topic, a store and its changelog), so a record that several places keep is encoded once, and
 * one read from a topic and kept is not encoded again.
 *
 * <p>The bytes are the truth: {@link #value()} is their decoded view, and changing it (generated Avro
 * classes have setters) changes nothing that is written. The schema id in the bytes is the one of the
 * subject they were first written for; a store's changelog may therefore hold a topic's schema id, which
 * every reader resolves like any other.
 *
 * @param value the decoded record; never null (a tombstone is a null {@code Encoded}, not an empty one)
 * @param bytes the record in the wire format; not copied, and never to be changed
 */
public record Encoded<T>(T value, byte[] bytes) {

    public Encoded {
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(bytes, "bytes");
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Encoded<?> encoded && value.equals(encoded.value);
    }

    @Override
    public int hashCode() {
        return value.hashCode();
    }

    @Override
    public String toString() {
        return "Encoded[" + value + ", " + bytes.length + " bytes]";
    }
}
