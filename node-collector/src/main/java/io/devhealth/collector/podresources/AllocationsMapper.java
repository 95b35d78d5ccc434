package io.devhealth.collector.podresources;

import io.devhealth.schema.avro.ClaimAllocation;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.ContainerAllocation;
import io.devhealth.schema.avro.DevicePluginAllocation;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.proto.podresources.v1.CDIDevice;
import io.devhealth.schema.proto.podresources.v1.ClaimResource;
import io.devhealth.schema.proto.podresources.v1.ContainerDevices;
import io.devhealth.schema.proto.podresources.v1.ContainerResources;
import io.devhealth.schema.proto.podresources.v1.DynamicResource;
import io.devhealth.schema.proto.podresources.v1.ListPodResourcesResponse;
import io.devhealth.schema.proto.podresources.v1.PodResources;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Maps a kubelet PodResources {@code List} answer to a {@link NodeAllocations} snapshot. */
public final class AllocationsMapper {

    private AllocationsMapper() {}

    public static NodeAllocations map(String cluster, String node, ListPodResourcesResponse response, Instant observedAt) {
        List<PodAllocation> pods = new ArrayList<>();
        for (PodResources pod : response.getPodResourcesList()) {
            List<ContainerAllocation> containers = new ArrayList<>();
            for (ContainerResources container : pod.getContainersList()) {
                List<ClaimAllocation> claims = new ArrayList<>();
                for (DynamicResource dynamic : container.getDynamicResourcesList()) {
                    claims.add(new ClaimAllocation(dynamic.getClaimName(), dynamic.getClaimNamespace(), devices(dynamic)));
                }
                List<DevicePluginAllocation> plugins = new ArrayList<>();
                for (ContainerDevices devices : container.getDevicesList()) {
                    plugins.add(new DevicePluginAllocation(devices.getResourceName(), List.copyOf(devices.getDeviceIdsList())));
                }
                if (!claims.isEmpty() || !plugins.isEmpty()) {
                    containers.add(new ContainerAllocation(container.getName(), claims, plugins));
                }
            }
            if (!containers.isEmpty()) {
                pods.add(new PodAllocation(pod.getNamespace(), pod.getName(), containers));
            }
        }
        // The kubelet's order is its map order; sort so that equal allocations compare equal.
        pods.sort(Comparator.comparing(PodAllocation::getNamespace).thenComparing(PodAllocation::getName));
        return NodeAllocations.newBuilder()
                .setCluster(cluster)
                .setNode(node)
                .setObservedAt(observedAt)
                .setPods(pods)
                .build();
    }

    /**
     * The kubelet declares the CDI slice per driver, outside its device loop, so a later
     * ClaimResource of a driver also lists the CDI names of that driver's earlier devices. A device's
     * own CDI ids are therefore those not already listed for an earlier device of the same driver.
     */
    static List<ClaimDevice> devices(DynamicResource dynamic) {
        Map<String, Set<String>> seenPerDriver = new HashMap<>();
        List<ClaimDevice> devices = new ArrayList<>();
        for (ClaimResource resource : dynamic.getClaimResourcesList()) {
            Set<String> seen = seenPerDriver.computeIfAbsent(resource.getDriverName(), d -> new HashSet<>());
            List<String> own = new ArrayList<>();
            for (CDIDevice cdi : resource.getCdiDevicesList()) {
                if (seen.add(cdi.getName())) {
                    own.add(cdi.getName());
                }
            }
            devices.add(ClaimDevice.newBuilder()
                    .setDriver(resource.getDriverName())
                    .setPool(resource.getPoolName())
                    .setDevice(resource.getDeviceName())
                    .setCdiIds(own)
                    .setShareId(resource.hasShareId() ? resource.getShareId() : null)
                    .build());
        }
        return devices;
    }
}
