package io.devhealth.processor.internals.stores;

import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.PodRef;

/** Keys of the processor's stores and output topics. */
public final class StateKeys {

    private StateKeys() {}

    /**
     * A device on a node: {@code node/driver/pool/device} for DRA devices, {@code node/uuid:<uuid>}
     * for devices known only by GPU UUID. Pools may contain '/', so the key is for lookup, not parsing.
     */
    public static String device(String node, DeviceRef device) {
        if (device.getDriver().isEmpty() && device.getUuid() != null) {
            return uuid(node, device.getUuid());
        }
        return node + "/" + device.getDriver() + "/" + device.getPool() + "/" + device.getDevice();
    }

    /** {@code node/uuid:<uuid>}: a device known only by GPU UUID (not, or not yet, in the node's inventory). */
    public static String uuid(String node, String uuid) {
        return node + "/uuid:" + uuid;
    }

    /** Prefix of every UUID-only device of {@code node}. */
    public static String uuidPrefix(String node) {
        return node + "/uuid:";
    }

    public static String device(String node, String driver, String pool, String device) {
        return node + "/" + driver + "/" + pool + "/" + device;
    }

    /** The node of a device key: node names cannot contain '/' (they are Kubernetes object names). */
    public static String nodeOf(String deviceKey) {
        return deviceKey.substring(0, deviceKey.indexOf('/'));
    }

    /** {@code namespace/name}: the key of pod-device-status. */
    public static String pod(PodRef pod) {
        return pod.getNamespace() + "/" + pod.getName();
    }

    public static String pod(String namespace, String name) {
        return namespace + "/" + name;
    }

    /**
     * {@code node/namespace/name}: a pod as one node sees it. Two nodes naming the same pod have two
     * keys, so neither's view overwrites the other's.
     */
    public static String nodePod(String node, String podKey) {
        return node + "/" + podKey;
    }
}
