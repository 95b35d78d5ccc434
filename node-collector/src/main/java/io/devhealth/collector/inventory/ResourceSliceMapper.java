package io.devhealth.collector.inventory;

import io.devhealth.schema.avro.InventoryDevice;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A node's ResourceSlices (resource.k8s.io/v1) → its device inventory.
 *
 * <p>A pool can span several slices, and while a driver republishes a pool, slices of the old and
 * the new {@code pool.generation} exist side by side: only the newest generation of each
 * (driver, pool) counts, as for the scheduler. The GPU UUID and product name come from the device
 * attributes {@code uuid} and {@code productName} (unqualified, i.e. in the driver's domain, or
 * qualified {@code <domain>/uuid}), where the driver publishes them (NVIDIA's does).
 */
public final class ResourceSliceMapper {

    static final String UUID_ATTRIBUTE = "uuid";
    static final List<String> PRODUCT_ATTRIBUTES = List.of("productName", "product", "model");

    private ResourceSliceMapper() {}

    /** One device of the node's current slices, as its driver published it. */
    public record SliceDevice(String driver, String pool, Device device) {}

    /** The devices of {@code node}'s slices, sorted by driver, pool, device. */
    public static List<InventoryDevice> devices(String node, Collection<ResourceSlice> slices) {
        List<InventoryDevice> out = new ArrayList<>();
        for (SliceDevice current : currentDevices(node, slices)) {
            Device device = current.device();
            Map<String, DeviceAttribute> attributes = device.getAttributes() == null ? Map.of() : device.getAttributes();
            out.add(InventoryDevice.newBuilder()
                    .setDriver(current.driver())
                    .setPool(current.pool())
                    .setDevice(device.getName())
                    .setUuid(stringAttribute(attributes, List.of(UUID_ATTRIBUTE)).orElse(null))
                    .setProductName(stringAttribute(attributes, PRODUCT_ATTRIBUTES).orElse(null))
                    .build());
        }
        return out;
    }

    /**
     * The devices of {@code node}'s slices of each pool's newest generation, sorted by driver, pool,
     * device: what the scheduler sees of the node, for the inventory and the device taints alike.
     */
    public static List<SliceDevice> currentDevices(String node, Collection<ResourceSlice> slices) {
        Map<String, Long> newestGeneration = new HashMap<>();
        List<ResourceSlice> ours = new ArrayList<>();
        for (ResourceSlice slice : slices) {
            ResourceSliceSpec spec = slice.getSpec();
            if (spec == null || !node.equals(spec.getNodeName()) || spec.getPool() == null) {
                continue; // the field selector should have done this; a slice for all nodes has no per-node health
            }
            ours.add(slice);
            newestGeneration.merge(poolKey(spec), generation(spec), Math::max);
        }
        List<SliceDevice> out = new ArrayList<>();
        for (ResourceSlice slice : ours) {
            ResourceSliceSpec spec = slice.getSpec();
            if (generation(spec) != newestGeneration.get(poolKey(spec)) || spec.getDevices() == null) {
                continue;
            }
            for (Device device : spec.getDevices()) {
                out.add(new SliceDevice(spec.getDriver(), spec.getPool().getName(), device));
            }
        }
        out.sort(Comparator.comparing(SliceDevice::driver).thenComparing(SliceDevice::pool)
                .thenComparing(d -> d.device().getName()));
        return out;
    }

    private static String poolKey(ResourceSliceSpec spec) {
        return spec.getDriver() + "/" + spec.getPool().getName();
    }

    private static long generation(ResourceSliceSpec spec) {
        return spec.getPool().getGeneration() == null ? 0 : spec.getPool().getGeneration();
    }

    private static Optional<String> stringAttribute(Map<String, DeviceAttribute> attributes, List<String> names) {
        for (String name : names) {
            for (Map.Entry<String, DeviceAttribute> entry : attributes.entrySet()) {
                String key = entry.getKey();
                boolean matches = key.equals(name) || key.endsWith("/" + name);
                if (matches && entry.getValue() != null && entry.getValue().getString() != null) {
                    return Optional.of(entry.getValue().getString());
                }
            }
        }
        return Optional.empty();
    }
}
