package io.devhealth.sink;

import io.devhealth.schema.avro.ClaimDeviceStatus;
import io.devhealth.schema.avro.ContainerDeviceStatus;
import io.devhealth.schema.avro.DevicePluginResourceStatus;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.DeviceStatus;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.PodRef;
import java.time.Instant;
import java.util.List;

/** PodDeviceStatus records as the processor emits them. */
public final class PodStatusFixtures {

    public static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");

    private PodStatusFixtures() {}

    public static DeviceStatus device(String device, HealthStatus health, String message) {
        return device(device, health, message, T0);
    }

    public static DeviceStatus device(String device, HealthStatus health, String message, Instant since) {
        return DeviceStatus.newBuilder()
                .setDevice(DeviceRef.newBuilder().setDriver("gpu.example.com").setPool("node-a").setDevice(device).build())
                .setResourceId("gpu.example.com/gpu=" + device)
                .setHealth(health)
                .setMessage(message)
                .setSince(since)
                .build();
    }

    /**
     * A device handed out by a device plugin: the processor knows it by the plugin's device id (a GPU
     * UUID), which is also its resource id; no DRA driver, pool or device name.
     */
    public static DeviceStatus pluginDevice(String id, HealthStatus health, String message, Instant since) {
        return DeviceStatus.newBuilder()
                .setDevice(DeviceRef.newBuilder().setDriver("").setPool("").setDevice("").setUuid(id).build())
                .setResourceId(id)
                .setHealth(health)
                .setMessage(message)
                .setSince(since)
                .build();
    }

    /** The status of a pod whose one container has device-plugin devices of {@code resourceName} and no claims. */
    public static PodDeviceStatus pluginStatus(long version, String namespace, String pod, String container, String resourceName,
                                               HealthStatus summary, DeviceStatus... devices) {
        return PodDeviceStatus.newBuilder()
                .setPod(new PodRef(namespace, pod, null))
                .setNode("node-a")
                .setVersion(version)
                .setUpdatedAt(T0)
                .setSummary(summary)
                .setContainers(List.of(ContainerDeviceStatus.newBuilder().setName(container).setClaims(List.of())
                        .setDevicePluginResources(List.of(new DevicePluginResourceStatus(resourceName, List.of(devices)))).build()))
                .build();
    }

    public static PodDeviceStatus status(String namespace, String pod, String container, String resourceClaim, HealthStatus summary,
                                         DeviceStatus... devices) {
        return status(1, namespace, pod, container, resourceClaim, summary, devices);
    }

    public static PodDeviceStatus status(long version, String namespace, String pod, String container, String resourceClaim,
                                         HealthStatus summary, DeviceStatus... devices) {
        return PodDeviceStatus.newBuilder()
                .setPod(new PodRef(namespace, pod, null))
                .setNode("node-a")
                .setVersion(version)
                .setUpdatedAt(T0)
                .setSummary(summary)
                .setContainers(List.of(ContainerDeviceStatus.newBuilder().setName(container)
                        .setClaims(List.of(new ClaimDeviceStatus(resourceClaim, namespace, List.of(devices)))).build()))
                .build();
    }
}
