package io.devhealth.schema;

import io.devhealth.schema.avro.ClaimDeviceStatus;
import io.devhealth.schema.avro.ContainerDeviceStatus;
import io.devhealth.schema.avro.DevicePluginResourceStatus;
import io.devhealth.schema.avro.DeviceStatus;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import java.util.List;

/**
 * How a pod's devices add up to the pod's health ({@code PodDeviceStatus.summary}): the rule the
 * processor writes a status by and the sink rebuilds a terminated pod's status by, so that both say the
 * same of the same devices.
 */
public final class PodHealth {

    private PodHealth() {
    }

    /**
     * The pod's summary: its worst device, and UNKNOWN when it shows no device at all. A pod whose only
     * devices come from a device plugin no health source knows (its GPUs not yet reported, or an RDMA
     * plugin's devices) has nothing known about it; Healthy would claim a check that never happened.
     */
    public static HealthStatus summary(List<ContainerDeviceStatus> containers) {
        HealthStatus summary = null;
        for (ContainerDeviceStatus container : containers) {
            for (ClaimDeviceStatus claim : container.getClaims()) {
                for (DeviceStatus device : claim.getDevices()) {
                    summary = summary == null ? device.getHealth() : worse(summary, device.getHealth());
                }
            }
            for (DevicePluginResourceStatus resource : container.getDevicePluginResources()) {
                for (DeviceStatus device : resource.getDevices()) {
                    summary = summary == null ? device.getHealth() : worse(summary, device.getHealth());
                }
            }
        }
        return summary == null ? HealthStatus.UNKNOWN : summary;
    }

    /** True when {@code status} shows at least one device. */
    public static boolean hasDevices(PodDeviceStatus status) {
        return status.getContainers().stream().anyMatch(container -> !container.getDevicePluginResources().isEmpty()
                || container.getClaims().stream().anyMatch(claim -> !claim.getDevices().isEmpty()));
    }

    /** UNHEALTHY over UNKNOWN over HEALTHY. */
    public static HealthStatus worse(HealthStatus a, HealthStatus b) {
        if (a == HealthStatus.UNHEALTHY || b == HealthStatus.UNHEALTHY) {
            return HealthStatus.UNHEALTHY;
        }
        if (a == HealthStatus.UNKNOWN || b == HealthStatus.UNKNOWN) {
            return HealthStatus.UNKNOWN;
        }
        return HealthStatus.HEALTHY;
    }
}
