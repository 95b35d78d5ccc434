package io.devhealth.collector.nvml.internals;

import com.sun.jna.Pointer;
import java.util.List;

/**
 * One GPU found by enumeration, with its NVML handle (valid for the session that found it).
 *
 * @param migDevices the MIG instances when MIG mode is enabled, else empty
 */
public record GpuDevice(Pointer handle, int index, String uuid, String name, String pciBusId, boolean migEnabled,
        List<MigDevice> migDevices) {

    public GpuDevice {
        migDevices = List.copyOf(migDevices);
    }

    public DeviceKey key() {
        return DeviceKey.gpu(uuid);
    }

    /** A MIG instance: its own UUID (MIG-…), and the GI/CI ids that events carry. */
    public record MigDevice(String migUuid, int gpuInstanceId, int computeInstanceId) {}
}
