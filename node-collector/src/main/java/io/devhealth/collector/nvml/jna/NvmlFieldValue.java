package io.devhealth.collector.nvml.jna;

import com.sun.jna.Structure;

/**
 * {@code nvmlFieldValue_t}, the element of {@code nvmlDeviceGetFieldValues}: 40 bytes on LP64.
 * The layout is nvml.h's (checked against the header text in several public copies): the union
 * {@code nvmlValue_t} is 8 bytes, 8-aligned.
 *
 * <pre>
 * 0  fieldId      unsigned int   set by the caller
 * 4  scopeId      unsigned int   e.g. the NVLink id; 0 here
 * 8  timestamp    long long      µs since 1970
 * 16 latencyUsec  long long
 * 24 valueType    nvmlValueType_t (DOUBLE 0, UNSIGNED_INT 1, UNSIGNED_LONG 2, UNSIGNED_LONG_LONG 3,
 *                                  SIGNED_LONG_LONG 4, SIGNED_INT 5, UNSIGNED_SHORT 6)
 * 28 nvmlReturn   nvmlReturn_t   per-field result; value is undefined unless SUCCESS
 * 32 value        nvmlValue_t
 * </pre>
 */
@Structure.FieldOrder({"fieldId", "scopeId", "timestamp", "latencyUsec", "valueType", "nvmlReturn", "value"})
public final class NvmlFieldValue extends Structure {

    public static final int SIZE = 40;
    public static final int OFFSET_FIELD_ID = 0;
    public static final int OFFSET_VALUE_TYPE = 24;
    public static final int OFFSET_RETURN = 28;
    public static final int OFFSET_VALUE = 32;

    public static final int VALUE_TYPE_DOUBLE = 0;
    public static final int VALUE_TYPE_UNSIGNED_INT = 1;
    public static final int VALUE_TYPE_UNSIGNED_LONG = 2;
    public static final int VALUE_TYPE_UNSIGNED_LONG_LONG = 3;
    public static final int VALUE_TYPE_SIGNED_LONG_LONG = 4;
    public static final int VALUE_TYPE_SIGNED_INT = 5;
    public static final int VALUE_TYPE_UNSIGNED_SHORT = 6;

    /**
     * {@code NVML_FI_DEV_GET_GPU_RECOVERY_ACTION}: None 0, GPU_RESET 1, NODE_REBOOT 2, DRAIN_P2P 3,
     * DRAIN_AND_RESET 4, RECOVER_IMEX_DOMAIN 5, and the field id 230, as recorded from nvml.h of CUDA 13.3
     * (not checked against a second copy); which driver first serves this field is UNCONFIRMED, so
     * NOT_SUPPORTED is expected on older ones.
     */
    public static final int FI_DEV_GET_GPU_RECOVERY_ACTION = 230;

    public int fieldId;
    public int scopeId;
    public long timestamp;
    public long latencyUsec;
    public int valueType;
    public int nvmlReturn;
    public long value;

    public int offsetOf(String field) {
        return fieldOffset(field);
    }
}
