package io.devhealth.schema.serde;

import java.nio.ByteBuffer;
import org.apache.kafka.common.errors.SerializationException;

/**
 * The Confluent framing of a Kafka record key or value: magic byte {@code 0x00}, the schema id as a
 * 4-byte big-endian int, then the Avro binary body with no schema and no length prefix.
 *
 * <p>Kept in one place because every consumer and producer of every devhealth topic, and every
 * external tool reading them (kcat {@code -s value='>bI'}, Apicurio's and Confluent's serdes),
 * depends on these five bytes.
 */
public final class ConfluentWireFormat {

    /** The first byte of every framed record. */
    public static final byte MAGIC_BYTE = 0x00;

    /** Magic byte plus schema id. */
    public static final int HEADER_LENGTH = 5;

    private ConfluentWireFormat() {
    }

    /** Writes the five header bytes for {@code schemaId} into {@code out}. */
    public static void writeHeader(ByteBuffer out, int schemaId) {
        out.put(MAGIC_BYTE).putInt(schemaId);
    }

    /** The five header bytes for {@code schemaId}. */
    public static byte[] header(int schemaId) {
        ByteBuffer buffer = ByteBuffer.allocate(HEADER_LENGTH);
        writeHeader(buffer, schemaId);
        return buffer.array();
    }

    /**
     * Reads the schema id of a framed record.
     *
     * @throws SerializationException when the data is shorter than the header or does not start with
     *                                the magic byte
     */
    public static int readSchemaId(byte[] data, String topic) {
        if (data.length < HEADER_LENGTH) {
            throw new SerializationException("Record of topic " + topic + " is " + data.length
                    + " bytes, shorter than the " + HEADER_LENGTH + "-byte Confluent header");
        }
        if (data[0] != MAGIC_BYTE) {
            throw new SerializationException(String.format(
                    "Record of topic %s starts with byte 0x%02x, not the Confluent magic byte 0x00", topic, data[0]));
        }
        return ByteBuffer.wrap(data, 1, 4).getInt();
    }
}
