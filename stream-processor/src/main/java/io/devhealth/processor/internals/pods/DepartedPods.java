package io.devhealth.processor.internals.pods;

import io.devhealth.processor.internals.stores.StateKeys;
import io.devhealth.schema.avro.ClaimAllocation;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.ContainerAllocation;
import io.devhealth.schema.avro.DevicePluginAllocation;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.PodAllocation;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which pods a node's device changes still reach after an allocation snapshot: the snapshot's own,
 * and those that left the node's allocations less than the termination window ago.
 *
 * <p>The kubelet lists a pod in PodResources only while its claims are prepared, and unprepares them
 * as soon as the pod's containers have finished. A driver often reports the failure that killed a job
 * seconds after the crash; without this the report would reach no pod, and the pod's record would
 * say its devices were healthy. What of such a late report the pod's record takes is the sink's
 * decision, by the containers' {@code finishedAt}; here the pod only keeps receiving.
 *
 * <p>A pod of the snapshot replaces a departed one of the same name (a pod re-created on the node).
 * A departed pod also stops receiving once another pod holds one of its devices: a failure from then
 * on happened under the new holder (a Job's replacement is often given the same GPU), and the departed
 * pod's record should not say it died of it.
 * The time a pod left is the {@code observedAt} of the first snapshot without it, on the node's
 * clock, as every other deadline of the node is.
 */
public final class DepartedPods {

    /**
     * @param allocations the snapshot to keep: the new snapshot's pods, then the departed pods still in the window
     * @param departed pod key → node time it left, for the departed pods kept
     * @param released pod keys of the previous kept snapshot that this one no longer reaches: their window
     *                 ended, another pod holds one of their devices, or there is no window. The node gives
     *                 these pods up (a pod of the same name may be scheduled on another node now).
     */
    public record Kept(NodeAllocations allocations, Map<String, Long> departed, List<String> released) {}

    private DepartedPods() {}

    /**
     * Whether a change at node time {@code nodeTime} still reaches the pod {@code podKey}: always for a
     * pod of the node's allocations, within the window for a departed one. (A departed pod is dropped
     * from the kept snapshot at the next snapshot after its window; until then this keeps it quiet.)
     */
    public static boolean reaches(Map<String, Long> departed, String podKey, long nodeTime, long windowMs) {
        Long leftAt = departed.get(podKey);
        return leftAt == null || inWindow(leftAt, nodeTime, windowMs);
    }

    /** The pod's devices on {@code node}: DRA devices by their device keys, device-plugin devices by their ids. */
    private static Set<String> devices(String node, PodAllocation pod) {
        Set<String> devices = new HashSet<>();
        for (ContainerAllocation container : pod.getContainers()) {
            for (ClaimAllocation claim : container.getClaims()) {
                for (ClaimDevice device : claim.getDevices()) {
                    devices.add(StateKeys.device(node, device.getDriver(), device.getPool(), device.getDevice()));
                }
            }
            for (DevicePluginAllocation resource : container.getDevicePluginResources()) {
                for (String id : resource.getDeviceIds()) {
                    devices.add("plugin:" + id);
                }
            }
        }
        return devices;
    }

    private static boolean inWindow(long leftAt, long nodeTime, long windowMs) {
        return nodeTime - leftAt < windowMs;
    }

    /**
     * @param previous the node's kept snapshot before {@code next} (departed pods included); null before the first
     * @param departed the departures known before {@code next}
     * @param windowMs how long a departed pod is kept
     */
    public static Kept after(NodeAllocations previous, NodeAllocations next, Map<String, Long> departed, long windowMs) {
        if (previous == null) {
            return new Kept(next, Map.of(), List.of());
        }
        long at = next.getObservedAt().toEpochMilli();
        Set<String> present = new HashSet<>();
        Set<String> held = new HashSet<>();
        for (PodAllocation pod : next.getPods()) {
            present.add(StateKeys.pod(pod.getNamespace(), pod.getName()));
            held.addAll(devices(next.getNode(), pod));
        }
        List<PodAllocation> pods = new ArrayList<>(next.getPods());
        Map<String, Long> stillDeparted = new HashMap<>();
        List<String> released = new ArrayList<>();
        for (PodAllocation pod : previous.getPods()) {
            String key = StateKeys.pod(pod.getNamespace(), pod.getName());
            if (present.contains(key)) {
                continue;
            }
            long leftAt = departed.getOrDefault(key, at);
            if (windowMs > 0 && inWindow(leftAt, at, windowMs) && devices(next.getNode(), pod).stream().noneMatch(held::contains)) {
                pods.add(pod);
                stillDeparted.put(key, leftAt);
            } else {
                released.add(key);
            }
        }
        if (stillDeparted.isEmpty()) {
            return new Kept(next, Map.of(), released);
        }
        return new Kept(NodeAllocations.newBuilder(next).setPods(pods).build(), stillDeparted, released);
    }
}
