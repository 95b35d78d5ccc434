package io.devhealth.collector.publish;

import io.devhealth.collector.spool.DiskSpool;
import io.devhealth.collector.spool.RecordType;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeDevices;
import io.devhealth.schema.avro.NodeHeartbeat;
import io.devhealth.schema.serde.AvroTrust;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;

/**
 * Encodes records for the spool without the schema registry, and decodes them for Kafka.
 *
 * <p>Why not the registry's wire format at once: the registry may be down exactly when Kafka is,
 * and accepting a record must never wait for the network. The spool holds Avro single-object
 * encoding (a 10-byte header with the writer schema's fingerprint, then Avro binary); each writer
 * schema is stored once in the spool's metadata, so records written by an older collector version
 * still decode after an upgrade (Avro schema resolution to the current classes).
 */
public final class SpoolCodec {

    static final String EPOCH_FIELD = "collectorEpoch";
    static final String SEQUENCE_FIELD = "sequence";

    private static final String SCHEMA_PREFIX = "schema/";

    private final DiskSpool spool;
    private final Map<RecordType, BinaryMessageEncoder<SpecificRecord>> encoders = new EnumMap<>(RecordType.class);
    private final Map<RecordType, BinaryMessageDecoder<SpecificRecord>> decoders = new EnumMap<>(RecordType.class);
    private final Set<Long> storedSchemas = ConcurrentHashMap.newKeySet();

    public SpoolCodec(DiskSpool spool) {
        AvroTrust.install();
        this.spool = spool;
        for (RecordType type : RecordType.values()) {
            Schema schema = schemaOf(type);
            encoders.put(type, new BinaryMessageEncoder<>(SpecificData.get(), schema));
            decoders.put(type, new BinaryMessageDecoder<>(SpecificData.get(), schema));
        }
        // Writer schemas of records an earlier version left in the spool.
        spool.metadata(SCHEMA_PREFIX).forEach((name, json) -> {
            Schema writer = new Schema.Parser().parse(new String(json, StandardCharsets.UTF_8));
            storedSchemas.add(SchemaNormalization.parsingFingerprint64(writer));
            for (RecordType type : RecordType.values()) {
                if (writer.getFullName().equals(schemaOf(type).getFullName())) {
                    decoders.get(type).addSchema(writer);
                }
            }
        });
    }

    /**
     * {@code record} with the identity it carries to Kafka: the spool's {@code epoch} and the {@code sequence} the spool
     * assigned. Every branch of {@code NodeEvent} has both fields, under these names.
     */
    public static SpecificRecord stamped(SpecificRecord record, long epoch, long sequence) {
        record.put(record.getSchema().getField(EPOCH_FIELD).pos(), epoch);
        record.put(record.getSchema().getField(SEQUENCE_FIELD).pos(), sequence);
        return record;
    }

    /** The kind of a record the collector writes; an {@link IllegalArgumentException} for any other record. */
    public static RecordType typeOf(SpecificRecord record) {
        if (record instanceof DeviceHealthReport) {
            return RecordType.DEVICE_REPORT;
        }
        if (record instanceof NodeHeartbeat) {
            return RecordType.NODE_HEARTBEAT;
        }
        if (record instanceof NodeAllocations) {
            return RecordType.NODE_ALLOCATIONS;
        }
        if (record instanceof NodeDevices) {
            return RecordType.NODE_DEVICES;
        }
        throw new IllegalArgumentException("not a spooled record type: " + record.getClass().getName());
    }

    private static Schema schemaOf(RecordType type) {
        return switch (type) {
            case DEVICE_REPORT -> DeviceHealthReport.getClassSchema();
            case NODE_ALLOCATIONS -> NodeAllocations.getClassSchema();
            case NODE_DEVICES -> NodeDevices.getClassSchema();
            case NODE_HEARTBEAT -> NodeHeartbeat.getClassSchema();
        };
    }

    /** The spooled form of {@code record}. */
    public byte[] encode(SpecificRecord record) {
        RecordType type = typeOf(record);
        rememberSchema(type);
        try {
            ByteBuffer buffer = encoders.get(type).encode(record);
            byte[] out = new byte[buffer.remaining()];
            buffer.get(out);
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void rememberSchema(RecordType type) {
        Schema schema = schemaOf(type);
        long fingerprint = SchemaNormalization.parsingFingerprint64(schema);
        if (storedSchemas.add(fingerprint)) {
            spool.putMetadata(SCHEMA_PREFIX + Long.toHexString(fingerprint), schema.toString().getBytes(StandardCharsets.UTF_8));
        }
    }

    /**
     * The record in its current generated class.
     *
     * @throws SerializationException when the bytes cannot be decoded (a poison record)
     */
    public SpecificRecord decode(RecordType type, byte[] payload) {
        try {
            return decoders.get(type).decode(payload);
        } catch (IOException | RuntimeException e) {
            throw new SerializationException("cannot decode spooled " + type + ": " + e, e);
        }
    }
}
