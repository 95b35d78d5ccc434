package io.devhealth.sink;

import io.devhealth.schema.HealthMessages;
import io.devhealth.schema.avro.ClaimDeviceStatus;
import io.devhealth.schema.avro.ContainerDeviceStatus;
import io.devhealth.schema.avro.DevicePluginResourceStatus;
import io.devhealth.schema.avro.DeviceStatus;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.ResourceClaim;
import io.fabric8.kubernetes.api.model.ResourceHealth;
import io.fabric8.kubernetes.api.model.ResourceHealthBuilder;
import io.fabric8.kubernetes.api.model.ResourceStatus;
import io.fabric8.kubernetes.api.model.ResourceStatusBuilder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds each container's {@code allocatedResourcesStatus} entries for DRA claims, obeying the API
 * server's validation: entry names {@code claim:<ref>} or {@code claim:<ref>/<request>} matching the
 * container's {@code resources.claims}; health one of Healthy/Unhealthy/Unknown; resourceIDs unique
 * within an entry; messages at most 1024 bytes, cut at a UTF-8 boundary.
 */
public final class AllocatedResourcesStatusBuilder {

    private static final Logger LOGGER = LoggerFactory.getLogger(AllocatedResourcesStatusBuilder.class);

    private AllocatedResourcesStatusBuilder() {}

    /** Container name → the claim entries devhealth owns for it, sorted by entry name. */
    public static Map<String, List<ResourceStatus>> build(Pod pod, PodDeviceStatus status) {
        Map<String, Container> containers = new LinkedHashMap<>();
        pod.getSpec().getContainers().forEach(c -> containers.put(c.getName(), c));
        Map<String, List<ResourceStatus>> result = new LinkedHashMap<>();
        for (ContainerDeviceStatus containerStatus : status.getContainers()) {
            Container container = containers.get(containerStatus.getName());
            if (container == null || container.getResources() == null) {
                continue;
            }
            Map<String, ResourceStatus> entries = new java.util.TreeMap<>();
            devicePluginEntries(container, containerStatus, entries);
            List<ResourceClaim> containerClaims = container.getResources().getClaims() == null
                    ? List.of() : container.getResources().getClaims();
            for (ClaimDeviceStatus claim : containerStatus.getClaims()) {
                Optional<String> reference = ClaimReferenceResolver.podClaimReference(pod, claim.getClaimName());
                if (reference.isEmpty()) {
                    LOGGER.warn("claim not referenced by pod pod={}/{} claim={}", pod.getMetadata().getNamespace(),
                            pod.getMetadata().getName(), claim.getClaimName());
                    continue;
                }
                List<ResourceHealth> health = resources(claim.getDevices());
                for (ResourceClaim containerClaim : containerClaims) {
                    if (!reference.get().equals(containerClaim.getName())) {
                        continue;
                    }
                    String request = containerClaim.getRequest();
                    String name = request == null || request.isEmpty()
                            ? "claim:" + containerClaim.getName()
                            : "claim:" + containerClaim.getName() + "/" + request;
                    entries.put(name, new ResourceStatusBuilder().withName(name).withResources(health).build());
                }
            }
            if (!entries.isEmpty()) {
                result.put(container.getName(), new ArrayList<>(entries.values()));
            }
        }
        return result;
    }

    /**
     * Device-plugin resources (e.g. {@code nvidia.com/gpu}, health from NVML by GPU UUID): the entry is
     * named after the resource, which validation requires to be one of the container's requests.
     */
    private static void devicePluginEntries(Container container, ContainerDeviceStatus status, Map<String, ResourceStatus> entries) {
        Map<String, ?> requests = container.getResources().getRequests() == null ? Map.of() : container.getResources().getRequests();
        Map<String, ?> limits = container.getResources().getLimits() == null ? Map.of() : container.getResources().getLimits();
        for (DevicePluginResourceStatus resource : status.getDevicePluginResources()) {
            String name = resource.getResourceName();
            if (resource.getDevices().isEmpty() || !(requests.containsKey(name) || limits.containsKey(name))) {
                continue;
            }
            entries.put(name, new ResourceStatusBuilder().withName(name).withResources(resources(resource.getDevices())).build());
        }
    }

    private static List<ResourceHealth> resources(List<DeviceStatus> devices) {
        List<ResourceHealth> resources = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        for (DeviceStatus device : devices) {
            // The API server rejects a repeated resourceID within one entry.
            if (!seen.add(device.getResourceId())) {
                continue;
            }
            String message = HealthMessages.truncateUtf8(device.getMessage(), HealthMessages.MAX_BYTES);
            resources.add(new ResourceHealthBuilder()
                    .withResourceID(device.getResourceId())
                    .withHealth(health(device.getHealth()))
                    .withMessage(message == null || message.isEmpty() ? null : message)
                    .build());
        }
        return resources;
    }

    /** The API's strings; the empty string is rejected by validation, so unknown maps to Unknown. */
    public static String health(HealthStatus status) {
        return switch (status) {
            case HEALTHY -> "Healthy";
            case UNHEALTHY -> "Unhealthy";
            case UNKNOWN -> "Unknown";
        };
    }
}
