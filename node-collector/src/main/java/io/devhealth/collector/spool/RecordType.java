package io.devhealth.collector.spool;

/** What a spooled record is; decides its Kafka topic and Avro class. The code is stored with the record: never renumber. */
public enum RecordType {
    /** A {@code DeviceReportEnvelope} (device report or node heartbeat), topic device-reports. */
    DEVICE_REPORT((byte) 1),
    /** A {@code NodeAllocations} snapshot, topic node-allocations. */
    NODE_ALLOCATIONS((byte) 2),
    /** A {@code NodeDevices} inventory, topic device-inventory. */
    NODE_DEVICES((byte) 3);

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
