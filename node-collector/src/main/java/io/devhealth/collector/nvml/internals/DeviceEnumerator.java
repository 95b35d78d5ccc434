package io.devhealth.collector.nvml.internals;

import com.sun.jna.Pointer;
import io.devhealth.collector.nvml.jna.Nvml;
import io.devhealth.collector.nvml.jna.NvmlException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Lists the GPUs NVML sees, with name, PCI bus id, index and MIG instances. */
final class DeviceEnumerator {

    private static final Logger LOGGER = LoggerFactory.getLogger(DeviceEnumerator.class);

    private DeviceEnumerator() {}

    /**
     * The GPUs that can be identified. A GPU whose handle or UUID cannot be read (typically
     * GPU_IS_LOST) is left out with a warning: without a UUID it cannot be reported, and the
     * tracker marks a GPU it knew but no longer finds as lost.
     */
    static Enumeration enumerate(Nvml nvml) throws NvmlException {
        int count = nvml.deviceCount();
        List<GpuDevice> devices = new ArrayList<>(count);
        int unidentified = 0;
        for (int i = 0; i < count; i++) {
            Pointer handle;
            String uuid;
            try {
                handle = nvml.handleByIndex(i);
                uuid = nvml.uuid(handle);
            } catch (NvmlException e) {
                LOGGER.warn("nvml gpu not identifiable index={} error=\"{}\"", i, e.getMessage());
                unidentified++;
                continue;
            }
            String name = optional(() -> nvml.name(handle), "");
            String busId = optional(() -> nvml.pciBusId(handle), "");
            int index = optional(() -> nvml.index(handle), i);
            boolean mig = optional(() -> nvml.migEnabled(handle), false);
            List<GpuDevice.MigDevice> migDevices = mig ? migDevices(nvml, handle, uuid) : List.of();
            devices.add(new GpuDevice(handle, index, uuid, name, busId, mig, migDevices));
        }
        return new Enumeration(devices, unidentified);
    }

    /**
     * @param unidentified how many GPUs NVML counts but could not name (typically lost): a GPU known
     *     before and missing now may be one of them
     */
    record Enumeration(List<GpuDevice> devices, int unidentified) {}

    private static List<GpuDevice.MigDevice> migDevices(Nvml nvml, Pointer gpu, String uuid) {
        List<GpuDevice.MigDevice> result = new ArrayList<>();
        try {
            int max = nvml.maxMigDeviceCount(gpu);
            for (int slot = 0; slot < max; slot++) {
                Pointer mig = nvml.migDeviceHandle(gpu, slot);
                if (mig != null) {
                    result.add(new GpuDevice.MigDevice(nvml.uuid(mig), nvml.gpuInstanceId(mig), nvml.computeInstanceId(mig)));
                }
            }
        } catch (NvmlException e) {
            LOGGER.warn("nvml mig enumeration failed gpu={} error=\"{}\"", uuid, e.getMessage());
        }
        return result;
    }

    @FunctionalInterface
    private interface Read<T> {
        T get() throws NvmlException;
    }

    private static <T> T optional(Read<T> read, T fallback) {
        try {
            return read.get();
        } catch (NvmlException e) {
            return fallback;
        }
    }
}
