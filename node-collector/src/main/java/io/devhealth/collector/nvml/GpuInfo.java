package io.devhealth.collector.nvml;

import java.util.List;

/**
 * A GPU as NVML enumerated it, for logs, the inventory and the demo.
 *
 * @param migInstances MIG instances (empty without MIG)
 */
public record GpuInfo(int index, String uuid, String name, String pciBusId, boolean migEnabled, List<MigInstance> migInstances) {

    /** One MIG instance: its MIG UUID and the GI/CI ids reports carry with the parent UUID. */
    public record MigInstance(String migUuid, int gpuInstanceId, int computeInstanceId) {}
}
