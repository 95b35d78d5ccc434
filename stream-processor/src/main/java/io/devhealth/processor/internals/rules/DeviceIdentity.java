package io.devhealth.processor.internals.rules;

import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.InventoryDevice;
import io.devhealth.schema.avro.NodeDevices;
import java.util.List;

/**
 * Maps between the two identities of a GPU: the DRA device
 * ({@code driver/pool/device}, from the node's ResourceSlices) and the GPU UUID NVML and device
 * plugins use. The node's inventory ({@link NodeDevices}) says which DRA device has which UUID.
 *
 * <p>For MIG, NVML reports carry the parent GPU's UUID (plus instance ids); every DRA device whose
 * inventory UUID is that parent UUID is mapped, because the GPU-level faults NVML reports (XIDs,
 * GPU lost) affect every slice of the GPU.
 */
public final class DeviceIdentity {

    private DeviceIdentity() {}

    /** A report or device-plugin id known only by GPU UUID: no DRA driver named. */
    public static boolean uuidOnly(DeviceRef ref) {
        return ref.getDriver().isEmpty() && ref.getUuid() != null && !ref.getUuid().isEmpty();
    }

    /** The inventory devices whose UUID is {@code uuid}; empty when the inventory is unknown or has none. */
    public static List<InventoryDevice> devicesWithUuid(NodeDevices inventory, String uuid) {
        if (inventory == null || uuid == null || uuid.isEmpty()) {
            return List.of();
        }
        return inventory.getDevices().stream().filter(d -> uuid.equals(d.getUuid())).toList();
    }

    /** The UUID of DRA device {@code driver/pool/device}, or null when the inventory does not say. */
    public static String uuidOf(NodeDevices inventory, String driver, String pool, String device) {
        if (inventory == null) {
            return null;
        }
        for (InventoryDevice d : inventory.getDevices()) {
            if (d.getDriver().equals(driver) && d.getPool().equals(pool) && d.getDevice().equals(device)) {
                return d.getUuid();
            }
        }
        return null;
    }

    /** The product name (e.g. {@code NVIDIA H100 80GB HBM3}) of a device, or null when the inventory does not say. */
    public static String productOf(NodeDevices inventory, DeviceRef ref) {
        if (inventory == null) {
            return null;
        }
        for (InventoryDevice d : inventory.getDevices()) {
            boolean sameDra = !ref.getDriver().isEmpty() && d.getDriver().equals(ref.getDriver())
                    && d.getPool().equals(ref.getPool()) && d.getDevice().equals(ref.getDevice());
            boolean sameUuid = ref.getUuid() != null && ref.getUuid().equals(d.getUuid());
            if (sameDra || sameUuid) {
                return d.getProductName();
            }
        }
        return null;
    }

    /** The DeviceRef of an inventory device, carrying its UUID. */
    public static DeviceRef ref(InventoryDevice device) {
        return DeviceRef.newBuilder().setDriver(device.getDriver()).setPool(device.getPool()).setDevice(device.getDevice())
                .setUuid(device.getUuid()).build();
    }
}
