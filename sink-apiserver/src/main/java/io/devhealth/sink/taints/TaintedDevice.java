package io.devhealth.sink.taints;

import io.devhealth.schema.avro.DeviceRef;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * One DRA device as a DeviceTaintRule selects it: the node it is on, its driver, pool and name.
 * {@link #ruleName()} is derived from these alone, so that every sink instance, before and after a
 * restart, creates the rule of a device under the same name and a second create is answered
 * AlreadyExists instead of making a duplicate.
 */
record TaintedDevice(String node, String driver, String pool, String device) {

    /** The device of a transition, or null when it is not a DRA device (no driver, pool or device name: nothing to select). */
    static TaintedDevice of(String node, DeviceRef ref) {
        if (node == null || node.isEmpty() || ref == null || isEmpty(ref.getDriver()) || isEmpty(ref.getPool())
                || isEmpty(ref.getDevice())) {
            return null;
        }
        return new TaintedDevice(node, ref.getDriver(), ref.getPool(), ref.getDevice());
    }

    private static boolean isEmpty(String value) {
        return value == null || value.isEmpty();
    }

    /** {@code devhealth-} and 32 hex digits of the SHA-256 of the four names: a valid object name of fixed length. */
    String ruleName() {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest(String.join("\n", node, driver, pool, device).getBytes(StandardCharsets.UTF_8));
            return "devhealth-" + HexFormat.of().formatHex(digest, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    @Override
    public String toString() {
        return node + "/" + driver + "/" + pool + "/" + device;
    }
}
