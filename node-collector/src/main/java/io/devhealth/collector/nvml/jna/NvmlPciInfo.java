package io.devhealth.collector.nvml.jna;

import com.sun.jna.Native;
import com.sun.jna.Structure;

/**
 * {@code nvmlPciInfo_t} as filled by {@code nvmlDeviceGetPciInfo_v3} (layout from nvml.h): 68 bytes,
 * 4-byte aligned.
 *
 * <pre>
 * 0  busIdLegacy     char[16]  "%04X:%02X:%02X.0"
 * 16 domain          unsigned int
 * 20 bus             unsigned int
 * 24 device          unsigned int
 * 28 pciDeviceId     unsigned int  (device id &lt;&lt; 16 | vendor id)
 * 32 pciSubSystemId  unsigned int
 * 36 busId           char[32]  "%08X:%02X:%02X.0"
 * </pre>
 */
@Structure.FieldOrder({"busIdLegacy", "domain", "bus", "device", "pciDeviceId", "pciSubSystemId", "busId"})
public final class NvmlPciInfo extends Structure {

    public static final int SIZE = 68;

    public byte[] busIdLegacy = new byte[16];
    public int domain;
    public int bus;
    public int device;
    public int pciDeviceId;
    public int pciSubSystemId;
    public byte[] busId = new byte[32];

    public String busId() {
        return Native.toString(busId, "US-ASCII");
    }
}
