package io.devhealth.collector.spool;

/**
 * What a spooled record is: one branch of the {@code NodeEvent} it is sent in, which decides its
 * Avro class. The code is stored with the record: never renumber.
 */
public enum RecordType {
    /** A {@code DeviceHealthReport}. */
    DEVICE_REPORT((byte) 1, "report"),
    /** A {@code NodeAllocations} snapshot. */
    NODE_ALLOCATIONS((byte) 2, "allocations"),
    /** A {@code NodeDevices} inventory. */
    NODE_DEVICES((byte) 3, "inventory"),
    /** A {@code NodeHeartbeat}. */
    NODE_HEARTBEAT((byte) 4, "heartbeat");

    private final byte code;
    private final String label;

    RecordType(byte code, String label) {
        this.code = code;
        this.label = label;
    }

    /** The kind in the collector's publish counter and logs (a device report says its own: CHANGE, KEEPALIVE). */
    public String label() {
        return label;
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
