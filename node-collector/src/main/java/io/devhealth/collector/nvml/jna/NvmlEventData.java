package io.devhealth.collector.nvml.jna;

import com.sun.jna.Pointer;
import com.sun.jna.Structure;

/**
 * {@code nvmlEventData_t} (layout from nvml.h): 32 bytes on x86-64 and aarch64 (LP64), no padding.
 *
 * <pre>
 * 0  device             nvmlDevice_t        device where the event occurred
 * 8  eventType          unsigned long long  one bit of the event mask
 * 16 eventData          unsigned long long  the XID for XID events; 0 otherwise; 999 = unknown XID
 * 24 gpuInstanceId      unsigned int        MIG GI id, 0xFFFFFFFF when not attributable
 * 28 computeInstanceId  unsigned int        MIG CI id, 0xFFFFFFFF when not attributable
 * </pre>
 *
 * The event loop reads events millions of times in a storm, so it does not go through JNA's
 * reflective {@link Structure#read()}: it reads a reused native buffer at the offsets below, which
 * a test checks against this Structure's own layout.
 */
@Structure.FieldOrder({"device", "eventType", "eventData", "gpuInstanceId", "computeInstanceId"})
public final class NvmlEventData extends Structure {

    public static final int SIZE = 32;
    public static final int OFFSET_DEVICE = 0;
    public static final int OFFSET_EVENT_TYPE = 8;
    public static final int OFFSET_EVENT_DATA = 16;
    public static final int OFFSET_GPU_INSTANCE_ID = 24;
    public static final int OFFSET_COMPUTE_INSTANCE_ID = 28;
    /** gpuInstanceId / computeInstanceId of an event that no MIG instance can be blamed for. */
    public static final int NO_INSTANCE = 0xFFFFFFFF;

    public Pointer device;
    public long eventType;
    public long eventData;
    public int gpuInstanceId;
    public int computeInstanceId;

    /** Offset of {@code field} as JNA lays this Structure out (for the layout test). */
    public int offsetOf(String field) {
        return fieldOffset(field);
    }
}
