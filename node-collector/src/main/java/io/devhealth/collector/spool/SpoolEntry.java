package io.devhealth.collector.spool;

import java.time.Instant;

/**
 * One record in the spool.
 *
 * @param sequence assigned when the spool accepted the record; strictly increasing within the spool's epoch
 * @param payload the encoded record (the spool does not look inside)
 */
public record SpoolEntry(long sequence, RecordType type, Priority priority, Instant acceptedAt, byte[] payload) {

    /** Bytes this entry counts against the spool's budget (key and value as stored). */
    public long storedBytes() {
        return SpoolFormat.KEY_BYTES + SpoolFormat.HEADER_BYTES + payload.length;
    }
}
