package io.devhealth.collector.nvml.internals;

import io.devhealth.schema.avro.DeviceRef;

/**
 * A device as NVML reports it: a whole GPU ({@code gpuInstanceId} and {@code computeInstanceId}
 * null) or one MIG instance of it (the parent GPU's UUID plus GI/CI ids).
 */
public record DeviceKey(String uuid, Integer gpuInstanceId, Integer computeInstanceId) {

    public static DeviceKey gpu(String uuid) {
        return new DeviceKey(uuid, null, null);
    }

    public boolean isMig() {
        return gpuInstanceId != null;
    }

    /** Driver, pool and device stay empty: the processor maps the UUID through the node's inventory. */
    public DeviceRef toDeviceRef() {
        return DeviceRef.newBuilder()
                .setUuid(uuid)
                .setMigGpuInstanceId(gpuInstanceId)
                .setMigComputeInstanceId(computeInstanceId)
                .build();
    }

    @Override
    public String toString() {
        return isMig() ? uuid + "/gi" + gpuInstanceId + "/ci" + computeInstanceId : uuid;
    }
}
