package io.devhealth.processor.internals.pods;

import io.devhealth.processor.internals.rules.DeviceHealthMerger;
import io.devhealth.processor.internals.rules.DeviceIdentity;
import io.devhealth.processor.internals.rules.DeviceState;
import io.devhealth.processor.internals.stores.StateKeys;
import io.devhealth.schema.PodHealth;
import io.devhealth.schema.avro.ClaimAllocation;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.ClaimDeviceStatus;
import io.devhealth.schema.avro.ContainerAllocation;
import io.devhealth.schema.avro.ContainerDeviceStatus;
import io.devhealth.schema.avro.DevicePluginAllocation;
import io.devhealth.schema.avro.DevicePluginResourceStatus;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.DeviceStatus;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.NodeDevices;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.PodRef;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/** Builds a pod's {@link PodDeviceStatus} from its allocation and the current health of each device. */
public final class PodStatusBuilder {

    private PodStatusBuilder() {}

    /** A pod's status from its DRA claims only (device-plugin devices left out): for callers without a UUID mapping. */
    public static PodDeviceStatus build(String cluster, String node, PodAllocation pod, Function<String, DeviceState> health,
                                        PodDeviceStatus previous, Instant now) {
        return build(cluster, node, pod, health, id -> null, null, previous, now);
    }

    /**
     * @param health the state (with effective health) of a device, by {@link StateKeys#device} key; null when unknown
     * @param byDeviceId the state a device-plugin device id (GPU UUID) reads its health from; null when no
     *                   source knows the id. Device-plugin devices no source knows are left out rather than
     *                   shown Unknown: devhealth watches GPUs, not every device plugin of the node (RDMA, SR-IOV…)
     * @param inventory the node's inventory, for each device's product name (fleet counts by product of the
     *                  pods' verdicts); null when none is known
     * @param previous the last status emitted for this pod, so unchanged devices keep their {@code since}
     */
    public static PodDeviceStatus build(String cluster, String node, PodAllocation pod,
                                        Function<String, DeviceState> health, Function<String, DeviceState> byDeviceId,
                                        NodeDevices inventory, PodDeviceStatus previous, Instant now) {
        Map<String, DeviceStatus> previousDevices = indexDevices(previous);
        List<ContainerDeviceStatus> containers = new ArrayList<>();
        for (ContainerAllocation container : pod.getContainers()) {
            List<ClaimDeviceStatus> claims = new ArrayList<>();
            for (ClaimAllocation claim : container.getClaims()) {
                List<DeviceStatus> devices = new ArrayList<>();
                for (ClaimDevice device : claim.getDevices()) {
                    String key = StateKeys.device(node, device.getDriver(), device.getPool(), device.getDevice());
                    devices.add(deviceStatus(device, health.apply(key), previousDevices.get(key), now, inventory));
                }
                claims.add(new ClaimDeviceStatus(claim.getClaimName(), claim.getClaimNamespace(), devices));
            }
            List<DevicePluginResourceStatus> pluginResources = new ArrayList<>();
            for (DevicePluginAllocation resource : container.getDevicePluginResources()) {
                List<DeviceStatus> devices = new ArrayList<>();
                for (String id : resource.getDeviceIds()) {
                    DeviceState state = byDeviceId.apply(id);
                    if (state != null) {
                        devices.add(pluginDeviceStatus(id, state, previousDevices.get(pluginKey(resource.getResourceName(), id)), now,
                                inventory));
                    }
                }
                if (!devices.isEmpty()) {
                    pluginResources.add(new DevicePluginResourceStatus(resource.getResourceName(), devices));
                }
            }
            containers.add(ContainerDeviceStatus.newBuilder().setName(container.getName()).setClaims(claims)
                    .setDevicePluginResources(pluginResources).build());
        }
        return PodDeviceStatus.newBuilder()
                .setPod(new PodRef(pod.getNamespace(), pod.getName(), null))
                .setCluster(cluster)
                .setNode(node)
                .setVersion(previous == null ? 1 : previous.getVersion() + 1)
                .setUpdatedAt(now)
                .setSummary(PodHealth.summary(containers))
                .setContainers(containers)
                .build();
    }

    /**
     * The status of a pod that has left its node ({@link DepartedPods}), from {@code next} as
     * {@link #build} made it: only a device that is Unhealthy now takes its new status; every other
     * keeps the one {@code previous} gave it. A failure reported after the job's crash is news about
     * what the job ran on; a repair or the silence of a drained node after it is not, and would
     * otherwise make the pod's last status say its devices were fine. (The sink applies the same
     * idea exactly, by the containers' {@code finishedAt}.)
     */
    public static PodDeviceStatus afterDeparture(PodDeviceStatus previous, PodDeviceStatus next) {
        if (previous == null) {
            return next;
        }
        Map<String, DeviceStatus> before = indexDevices(previous);
        List<ContainerDeviceStatus> containers = new ArrayList<>();
        for (ContainerDeviceStatus container : next.getContainers()) {
            List<ClaimDeviceStatus> claims = new ArrayList<>();
            for (ClaimDeviceStatus claim : container.getClaims()) {
                List<DeviceStatus> devices = new ArrayList<>();
                for (DeviceStatus device : claim.getDevices()) {
                    devices.add(onlyFailures(before.get(StateKeys.device(next.getNode(), device.getDevice())), device));
                }
                claims.add(new ClaimDeviceStatus(claim.getClaimName(), claim.getClaimNamespace(), devices));
            }
            List<DevicePluginResourceStatus> pluginResources = new ArrayList<>();
            for (DevicePluginResourceStatus resource : container.getDevicePluginResources()) {
                List<DeviceStatus> devices = new ArrayList<>();
                for (DeviceStatus device : resource.getDevices()) {
                    devices.add(onlyFailures(before.get(pluginKey(resource.getResourceName(), device.getResourceId())), device));
                }
                pluginResources.add(new DevicePluginResourceStatus(resource.getResourceName(), devices));
            }
            containers.add(ContainerDeviceStatus.newBuilder(container).setClaims(claims).setDevicePluginResources(pluginResources).build());
        }
        return PodDeviceStatus.newBuilder(next).setSummary(PodHealth.summary(containers)).setContainers(containers).build();
    }

    private static DeviceStatus onlyFailures(DeviceStatus before, DeviceStatus now) {
        return before == null || now.getHealth() == HealthStatus.UNHEALTHY ? now : before;
    }

    /** True when {@code next} says something {@code previous} did not (version and time aside). */
    public static boolean differs(PodDeviceStatus previous, PodDeviceStatus next) {
        return previous == null
                || previous.getSummary() != next.getSummary()
                || !previous.getNode().equals(next.getNode())
                || !previous.getContainers().equals(next.getContainers());
    }

    private static DeviceStatus deviceStatus(ClaimDevice device, DeviceState state, DeviceStatus previous, Instant now,
                                             NodeDevices inventory) {
        HealthStatus health = state == null ? HealthStatus.UNKNOWN : state.health();
        String message = state == null ? "no health reported yet by driver " + device.getDriver() : state.message();
        String reason = state == null ? DeviceHealthMerger.REASON_NEVER_REPORTED : state.reason();
        Instant since = previous != null && previous.getHealth() == health ? previous.getSince() : now;
        String resourceId = device.getCdiIds().isEmpty()
                ? device.getDriver() + "/" + device.getPool() + "/" + device.getDevice()
                : device.getCdiIds().get(0);
        DeviceRef ref = DeviceRef.newBuilder().setDriver(device.getDriver()).setPool(device.getPool()).setDevice(device.getDevice()).build();
        return DeviceStatus.newBuilder()
                .setDevice(ref)
                .setResourceId(resourceId)
                .setHealth(health)
                .setMessage(message)
                .setReason(reason)
                .setSince(since)
                .setProduct(DeviceIdentity.productOf(inventory, ref))
                .build();
    }

    private static DeviceStatus pluginDeviceStatus(String id, DeviceState state, DeviceStatus previous, Instant now,
                                                   NodeDevices inventory) {
        Instant since = previous != null && previous.getHealth() == state.health() ? previous.getSince() : now;
        // The DRA identity too when the inventory maps the UUID: the query API can then link to its history.
        DeviceRef ref = DeviceRef.newBuilder().setDriver(state.driver()).setPool(state.pool()).setDevice(state.device())
                .setUuid(id).build();
        return DeviceStatus.newBuilder()
                .setDevice(ref)
                .setProduct(DeviceIdentity.productOf(inventory, ref))
                .setResourceId(id)
                .setHealth(state.health())
                .setMessage(state.message())
                .setReason(state.reason())
                .setSince(since)
                .build();
    }

    private static String pluginKey(String resourceName, String id) {
        return "plugin:" + resourceName + "/" + id;
    }

    private static Map<String, DeviceStatus> indexDevices(PodDeviceStatus status) {
        Map<String, DeviceStatus> index = new HashMap<>();
        if (status != null) {
            for (ContainerDeviceStatus container : status.getContainers()) {
                for (ClaimDeviceStatus claim : container.getClaims()) {
                    for (DeviceStatus device : claim.getDevices()) {
                        index.put(StateKeys.device(status.getNode(), device.getDevice()), device);
                    }
                }
                for (DevicePluginResourceStatus resource : container.getDevicePluginResources()) {
                    for (DeviceStatus device : resource.getDevices()) {
                        index.put(pluginKey(resource.getResourceName(), device.getResourceId()), device);
                    }
                }
            }
        }
        return index;
    }
}
