package io.devhealth.collector.nvml.jna;

import java.util.ArrayList;
import java.util.List;

/**
 * The health-related bits of the NVML event mask ({@code unsigned long long}, nvml.h's {@code nvmlEventType*} constants).
 *
 * <p>0x1–0x8 have been in nvml.h for many releases. 0x200–0x2000 first appear in the CUDA 12.6
 * header and 0x4000–0x8000 in 12.8; which driver branch first <em>delivers</em> them, and what
 * {@code eventData} carries for them, is UNCONFIRMED (the header documents {@code eventData} only for
 * XID events). That is why the registered mask is always ANDed with
 * {@code nvmlDeviceGetSupportedEventTypes}, and why these events are identified by type alone.
 */
public enum NvmlEventType {
    SINGLE_BIT_ECC(0x1L),
    DOUBLE_BIT_ECC(0x2L),
    XID_CRITICAL_ERROR(0x8L),
    SINGLE_BIT_ECC_STORM(0x200L),
    DRAM_RETIREMENT_EVENT(0x400L),
    DRAM_RETIREMENT_FAILURE(0x800L),
    NON_FATAL_POISON(0x1000L),
    FATAL_POISON(0x2000L),
    GPU_UNAVAILABLE(0x4000L),
    GPU_RECOVERY_ACTION(0x8000L);

    private final long bit;

    NvmlEventType(long bit) {
        this.bit = bit;
    }

    public long bit() {
        return bit;
    }

    /** The OR of {@code types}. */
    public static long mask(Iterable<NvmlEventType> types) {
        long mask = 0;
        for (NvmlEventType type : types) {
            mask |= type.bit;
        }
        return mask;
    }

    /** The types whose bit is set in {@code mask}. */
    public static List<NvmlEventType> inMask(long mask) {
        List<NvmlEventType> types = new ArrayList<>();
        for (NvmlEventType type : values()) {
            if ((mask & type.bit) != 0) {
                types.add(type);
            }
        }
        return types;
    }

    /** The type of a delivered event (exactly one bit), or null for a bit devhealth does not register. */
    public static NvmlEventType ofBit(long bit) {
        for (NvmlEventType type : values()) {
            if (type.bit == bit) {
                return type;
            }
        }
        return null;
    }
}
