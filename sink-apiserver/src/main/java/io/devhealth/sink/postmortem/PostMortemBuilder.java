package io.devhealth.sink.postmortem;

import io.devhealth.schema.HealthMessages;
import io.devhealth.schema.HealthWords;
import io.devhealth.schema.VerdictWords;
import io.devhealth.schema.avro.ClaimDeviceStatus;
import io.devhealth.schema.avro.ContainerDeviceStatus;
import io.devhealth.schema.avro.DevicePluginResourceStatus;
import io.devhealth.schema.avro.DeviceStatus;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.sink.ClaimReferenceResolver;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.ResourceClaim;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds a pod's {@link DevicePostMortem.Spec} from its device status, and the one-line message that
 * devhealth's pod condition carries. Entries are named as the kubelet names its
 * {@code allocatedResourcesStatus} entries, so that the record reads like the field it replaces: one per
 * {@code containers[].resources.claims[]} entry, {@code claim:<ref>} or {@code claim:<ref>/<request>},
 * where {@code <ref>} is the pod-level claim reference (not the ResourceClaim object name); under a
 * request, only the devices allocated for that request (from the claim's allocation results), as the
 * kubelet does since 1.36. Device-plugin resources are named after the resource the container requests.
 */
public final class PostMortemBuilder {

    private static final Logger LOGGER = LoggerFactory.getLogger(PostMortemBuilder.class);
    /** Pod condition and Event messages stay readable; the record holds everything. */
    static final int MESSAGE_MAX_BYTES = HealthMessages.MAX_BYTES;

    private PostMortemBuilder() {}

    /** The record of {@code pod} (terminated) with device health {@code status} (already as of termination). */
    public static DevicePostMortem.Spec build(Pod pod, PodDeviceStatus status, ClaimAllocations allocations) {
        Map<String, ContainerStatus> containerStatuses = new HashMap<>();
        if (pod.getStatus() != null && pod.getStatus().getContainerStatuses() != null) {
            pod.getStatus().getContainerStatuses().forEach(c -> containerStatuses.put(c.getName(), c));
        }
        List<DevicePostMortem.ContainerRecord> containers = new ArrayList<>();
        entries(pod, status, allocations).forEach((name, resources) -> {
            ContainerStateTerminated terminated = Optional.ofNullable(containerStatuses.get(name))
                    .map(ContainerStatus::getState).map(s -> s.getTerminated()).orElse(null);
            containers.add(new DevicePostMortem.ContainerRecord(name,
                    terminated == null ? null : terminated.getFinishedAt(),
                    terminated == null ? null : terminated.getExitCode(),
                    terminated == null ? null : terminated.getReason(),
                    resources));
        });
        return new DevicePostMortem.Spec(
                new DevicePostMortem.PodIdentity(pod.getMetadata().getName(), pod.getMetadata().getUid()),
                pod.getSpec() == null || pod.getSpec().getNodeName() == null ? status.getNode() : pod.getSpec().getNodeName(),
                pod.getStatus() == null ? null : pod.getStatus().getPhase(),
                TerminatedDeviceHealth.podFinishedAt(pod).map(Object::toString).orElse(null),
                HealthWords.of(status.getSummary()),
                VerdictWords.of(PodVerdict.of(status.getSummary())),
                message(status),
                containers,
                null,
                null);
    }

    /** Container name → its entries, sorted by entry name; containers without devices are left out. */
    static Map<String, List<DevicePostMortem.ResourceRecord>> entries(Pod pod, PodDeviceStatus status, ClaimAllocations allocations) {
        Map<String, Container> containers = new HashMap<>();
        pod.getSpec().getContainers().forEach(c -> containers.put(c.getName(), c));
        Map<String, List<DevicePostMortem.ResourceRecord>> result = new TreeMap<>();
        for (ContainerDeviceStatus containerStatus : status.getContainers()) {
            Container container = containers.get(containerStatus.getName());
            if (container == null || container.getResources() == null) {
                continue;
            }
            Map<String, DevicePostMortem.ResourceRecord> entries = new TreeMap<>();
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
                Map<String, String> requests = allocations.requestsByDevice(claim.getClaimNamespace(), claim.getClaimName(),
                        pod.getMetadata().getUid());
                for (ResourceClaim containerClaim : containerClaims) {
                    if (!reference.get().equals(containerClaim.getName())) {
                        continue;
                    }
                    String request = containerClaim.getRequest() == null || containerClaim.getRequest().isEmpty()
                            ? null : containerClaim.getRequest();
                    String name = request == null ? "claim:" + containerClaim.getName() : "claim:" + containerClaim.getName() + "/" + request;
                    List<DevicePostMortem.DeviceRecord> devices = new ArrayList<>();
                    Set<String> seen = new LinkedHashSet<>();
                    for (DeviceStatus device : claim.getDevices()) {
                        String allocatedFor = requests.get(ClaimAllocations.deviceKey(device.getDevice().getDriver(),
                                device.getDevice().getPool(), device.getDevice().getDevice()));
                        // A device allocated for another request of the same claim belongs to that request's entry.
                        if (request != null && allocatedFor != null && !request.equals(baseRequest(allocatedFor))) {
                            continue;
                        }
                        if (seen.add(device.getResourceId())) {
                            devices.add(record(device, allocatedFor, device.getDevice().getUuid()));
                        }
                    }
                    if (!devices.isEmpty()) {
                        entries.put(name, new DevicePostMortem.ResourceRecord(name, containerClaim.getName(), claim.getClaimName(),
                                request, devices));
                    }
                }
            }
            if (!entries.isEmpty()) {
                result.put(container.getName(), new ArrayList<>(entries.values()));
            }
        }
        return result;
    }

    /** {@code a/b} → {@code a}: a subrequest of a prioritized list belongs to its parent request. */
    static String baseRequest(String request) {
        int slash = request.indexOf('/');
        return slash < 0 ? request : request.substring(0, slash);
    }

    /**
     * Device-plugin resources (e.g. {@code nvidia.com/gpu}, health from NVML by GPU UUID), named after the
     * resource the container requests.
     */
    private static void devicePluginEntries(Container container, ContainerDeviceStatus status,
                                            Map<String, DevicePostMortem.ResourceRecord> entries) {
        Map<String, ?> requests = container.getResources().getRequests() == null ? Map.of() : container.getResources().getRequests();
        Map<String, ?> limits = container.getResources().getLimits() == null ? Map.of() : container.getResources().getLimits();
        for (DevicePluginResourceStatus resource : status.getDevicePluginResources()) {
            String name = resource.getResourceName();
            if (resource.getDevices().isEmpty() || !(requests.containsKey(name) || limits.containsKey(name))) {
                continue;
            }
            List<DevicePostMortem.DeviceRecord> devices = new ArrayList<>();
            Set<String> seen = new LinkedHashSet<>();
            for (DeviceStatus device : resource.getDevices()) {
                if (seen.add(device.getResourceId())) {
                    String uuid = device.getDevice().getUuid() != null ? device.getDevice().getUuid() : gpuOfShare(device.getResourceId());
                    devices.add(record(device, null, uuid));
                }
            }
            entries.put(name, new DevicePostMortem.ResourceRecord(name, null, null, null, devices));
        }
    }

    /**
     * The GPU of a device-plugin id: NVIDIA's plugin names the replicas of a time-sliced or MPS-shared
     * GPU {@code <uuid>::<n>}; every replica is that one GPU.
     */
    static String gpuOfShare(String deviceId) {
        int share = deviceId.indexOf("::");
        return share < 0 ? deviceId : deviceId.substring(0, share);
    }

    private static DevicePostMortem.DeviceRecord record(DeviceStatus device, String request, String uuid) {
        String message = HealthMessages.truncateUtf8(device.getMessage(), HealthMessages.MAX_BYTES);
        return new DevicePostMortem.DeviceRecord(request,
                emptyToNull(device.getDevice().getDriver()), emptyToNull(device.getDevice().getPool()),
                emptyToNull(device.getDevice().getDevice()), uuid, device.getResourceId(), HealthWords.of(device.getHealth()),
                message == null || message.isEmpty() ? null : message, device.getReason(), device.getSince().toString(),
                device.getProduct());
    }

    private static String emptyToNull(String value) {
        return value == null || value.isEmpty() ? null : value;
    }

    /**
     * One line a human can read, for the pod condition, the Event and the record: every device that is not
     * healthy — which device (and GPU), which health, since when, why — or that all are healthy.
     */
    public static String message(PodDeviceStatus status) {
        List<String> problems = new ArrayList<>();
        int devices = 0;
        for (ContainerDeviceStatus container : status.getContainers()) {
            List<DeviceStatus> all = new ArrayList<>();
            container.getClaims().forEach(claim -> all.addAll(claim.getDevices()));
            container.getDevicePluginResources().forEach(resource -> all.addAll(resource.getDevices()));
            for (DeviceStatus device : all) {
                devices++;
                if (device.getHealth() != HealthStatus.HEALTHY) {
                    problems.add(describe(device));
                }
            }
        }
        String text = problems.isEmpty()
                ? (devices == 1 ? "the allocated device is healthy" : "all " + devices + " allocated devices are healthy")
                : String.join("; ", new LinkedHashSet<>(problems));
        return HealthMessages.truncateUtf8(text, MESSAGE_MAX_BYTES);
    }

    private static String describe(DeviceStatus device) {
        StringBuilder text = new StringBuilder();
        if (device.getDevice().getDriver().isEmpty()) {
            text.append(device.getResourceId());
        } else {
            text.append(device.getDevice().getDriver()).append('/').append(device.getDevice().getPool()).append('/')
                    .append(device.getDevice().getDevice());
        }
        String uuid = device.getDevice().getUuid();
        if (uuid != null && !uuid.isEmpty()) {
            text.append(" (").append(uuid).append(')');
        }
        text.append(' ').append(HealthWords.of(device.getHealth())).append(" since ").append(device.getSince());
        if (device.getReason() != null && !device.getReason().isEmpty()) {
            text.append(" [").append(device.getReason()).append(']');
        }
        if (device.getMessage() != null && !device.getMessage().isEmpty()) {
            text.append(": ").append(device.getMessage());
        }
        return text.toString();
    }
}
