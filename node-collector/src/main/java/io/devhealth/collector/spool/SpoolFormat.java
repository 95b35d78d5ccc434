package io.devhealth.collector.spool;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * The on-disk layout of the spool's RocksDB keys and values.
 *
 * <pre>
 * record key   'R' + sequence (8 bytes, big-endian: byte order = sequence order)
 * record value version (1) + type (1) + priority (1) + acceptedAt epoch millis (8) + payload
 * metadata key 'M' + UTF-8 name ('M' &lt; 'R', so record scans never see metadata)
 * </pre>
 */
final class SpoolFormat {

    static final byte RECORD_PREFIX = 'R';
    static final byte META_PREFIX = 'M';
    static final int KEY_BYTES = 9;
    static final int HEADER_BYTES = 11;
    private static final byte VERSION = 1;

    /** Exclusive upper bound of every record key. */
    static final byte[] RECORDS_END = {RECORD_PREFIX + 1};

    private SpoolFormat() {}

    static byte[] recordKey(long sequence) {
        return ByteBuffer.allocate(KEY_BYTES).put(RECORD_PREFIX).putLong(sequence).array();
    }

    static long sequenceOf(byte[] key) {
        if (key.length != KEY_BYTES || key[0] != RECORD_PREFIX) {
            throw new IllegalArgumentException("not a spool record key");
        }
        return ByteBuffer.wrap(key, 1, 8).getLong();
    }

    static byte[] metaKey(String name) {
        byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(1 + utf8.length).put(META_PREFIX).put(utf8).array();
    }

    static String metaName(byte[] key) {
        return new String(key, 1, key.length - 1, StandardCharsets.UTF_8);
    }

    static byte[] value(RecordType type, Priority priority, Instant acceptedAt, byte[] payload) {
        return ByteBuffer.allocate(HEADER_BYTES + payload.length)
                .put(VERSION).put(type.code()).put(priority.code()).putLong(acceptedAt.toEpochMilli()).put(payload)
                .array();
    }

    static SpoolEntry entry(byte[] key, byte[] value) {
        if (value.length < HEADER_BYTES || value[0] != VERSION) {
            throw new IllegalArgumentException("unsupported spool value (version " + (value.length > 0 ? value[0] : -1) + ")");
        }
        ByteBuffer buffer = ByteBuffer.wrap(value);
        buffer.get();
        RecordType type = RecordType.fromCode(buffer.get());
        Priority priority = Priority.fromCode(buffer.get());
        Instant acceptedAt = Instant.ofEpochMilli(buffer.getLong());
        byte[] payload = new byte[buffer.remaining()];
        buffer.get(payload);
        return new SpoolEntry(sequenceOf(key), type, priority, acceptedAt, payload);
    }

    /** Priority and size only, without copying the payload (startup scan). */
    static Priority priorityOf(byte[] value) {
        return Priority.fromCode(value[2]);
    }

    static long longValue(byte[] bytes) {
        return ByteBuffer.wrap(bytes).getLong();
    }

    static byte[] longBytes(long value) {
        return ByteBuffer.allocate(8).putLong(value).array();
    }
}
