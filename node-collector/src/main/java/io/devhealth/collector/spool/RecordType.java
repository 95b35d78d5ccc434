package io.devhealth.collector.spool;

/**
 * What a spooled record is: one branch of the {@code NodeEvent} it is sent in, which decides its
 * Avro class. The code is stored with the record: never renumber.
 */
public enum RecordType {
    /** A {@code DeviceHealthReport}. */
    DEVICE_REPORT((byte) 1),
    /** A {@code NodeAllocations} snapshot. */
    NODE_ALLOCATIONS((byte) 2),
    /** A {@code NodeDevices} inventory. */
    NODE_DEVICES((byte) 3),
    /** A {@code NodeHeartbeat}. */
    NODE_HEARTBEAT((byte) 4);

    private final byte code;

    RecordType(byte code) {
        this.code = code;
    }

    byte code() {
        return code;
    }

    static RecordType fromCode(byte code) {
        for (RecordType type : values()) {
            if (type.code == code) {
                return type;
            }
        }
        throw new IllegalArgumentException("unknown spooled record type " + code);
    }
}
