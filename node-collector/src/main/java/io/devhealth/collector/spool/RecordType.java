package io.devhealth.collector.spool;

/**
 * What a spooled record is; decides its Avro class and, in the earlier three-topics layout, its
 * Kafka topic (in the node-events layout every type goes to node-events, wrapped in a
 * {@code NodeEvent}; see {@code io.devhealth.collector.publish.PublishLayout}). The code is stored
 * with the record: never renumber.
 */
public enum RecordType {
    /** A {@code DeviceReportEnvelope} (device report or node heartbeat); three-topics layout: topic device-reports. */
    DEVICE_REPORT((byte) 1),
    /** A {@code NodeAllocations} snapshot; three-topics layout: topic node-allocations. */
    NODE_ALLOCATIONS((byte) 2),
    /** A {@code NodeDevices} inventory; three-topics layout: topic device-inventory. */
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
