package io.devhealth.processor.internals.node;

import io.devhealth.processor.internals.stores.StateKeys;
import io.devhealth.schema.avro.ClaimAllocation;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.ContainerAllocation;
import io.devhealth.schema.avro.DevicePluginAllocation;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.PodAllocation;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Which pods of a node use which device, from one allocation snapshot: a device change reaches
 * exactly its pods without testing every pod of the node. On a node with hundreds of pods (MIG
 * slices, shared GPUs, or the benchmark's collector shards) testing every pod per change was the
 * largest cost of a transition.
 *
 * <p>Immutable; built from one {@link NodeAllocations} and valid as long as that snapshot is the
 * node's ({@link #isFor}).
 */
public final class PodIndex {

    private final NodeAllocations source;
    private final List<PodAllocation> pods;
    /** DRA device key ({@link StateKeys#device(String, String, String, String)}) → positions of its pods. */
    private final Map<String, List<Integer>> byDevice = new HashMap<>();
    /** Device-plugin device id (a GPU UUID) → positions of its pods. */
    private final Map<String, List<Integer>> byDeviceId = new HashMap<>();

    PodIndex(String node, NodeAllocations source) {
        this.source = source;
        this.pods = source.getPods();
        for (int position = 0; position < pods.size(); position++) {
            for (ContainerAllocation container : pods.get(position).getContainers()) {
                for (ClaimAllocation claim : container.getClaims()) {
                    for (ClaimDevice device : claim.getDevices()) {
                        add(byDevice, StateKeys.device(node, device.getDriver(), device.getPool(), device.getDevice()), position);
                    }
                }
                for (DevicePluginAllocation resource : container.getDevicePluginResources()) {
                    for (String id : resource.getDeviceIds()) {
                        add(byDeviceId, id, position);
                    }
                }
            }
        }
    }

    private static void add(Map<String, List<Integer>> index, String key, int position) {
        List<Integer> positions = index.computeIfAbsent(key, k -> new ArrayList<>(1));
        if (positions.isEmpty() || positions.get(positions.size() - 1) != position) {
            positions.add(position);
        }
    }

    boolean isFor(NodeAllocations snapshot) {
        return snapshot == source;
    }

    /**
     * The pods using a device, in the snapshot's order: as the DRA device {@code deviceKey} (null for
     * a device known only by UUID) or as the device-plugin id {@code uuid} (null when unknown).
     */
    public List<PodAllocation> podsUsing(String deviceKey, String uuid) {
        List<Integer> dra = deviceKey == null ? List.of() : byDevice.getOrDefault(deviceKey, List.of());
        List<Integer> plugin = uuid == null ? List.of() : byDeviceId.getOrDefault(uuid, List.of());
        if (plugin.isEmpty()) {
            return dra.stream().map(pods::get).toList();
        }
        TreeSet<Integer> positions = new TreeSet<>(dra);
        positions.addAll(plugin);
        return positions.stream().map(pods::get).toList();
    }
}
