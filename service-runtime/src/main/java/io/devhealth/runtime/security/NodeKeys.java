package io.devhealth.runtime.security;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.HexFormat;
import java.util.Objects;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Derives each node's signing key from the cluster secret: {@code HMAC-SHA256(master,
 * "devhealth-node-key/v1/" + node)}. HMAC is a PRF, so knowing node A's key says nothing about node
 * B's, and the processor needs only the master secret (no per-node key table to distribute).
 *
 * <p>A master secret is identified by its key id, {@code hex(HMAC-SHA256(master, "devhealth-key-id/v1"))[0..16]}:
 * records name the id of the master their key came from, so that two masters can be valid at once
 * while one is rotated out. The id reveals nothing usable about the secret.
 */
public final class NodeKeys {

    /** HMAC-SHA256, as {@link Mac} names it. */
    public static final String ALGORITHM = "HmacSHA256";
    /** Shortest master secret accepted, in bytes (UTF-8): 256 bits of base64 output is 44 characters. */
    public static final int MIN_MASTER_BYTES = 32;

    private static final String NODE_KEY_LABEL = "devhealth-node-key/v1/";
    private static final String KEY_ID_LABEL = "devhealth-key-id/v1";

    private NodeKeys() {}

    /**
     * The signing key of {@code node} under {@code master}: what an operator hands the collector of
     * that node (see {@link NodeKeyCredential#issue}).
     */
    public static byte[] deriveNodeKey(byte[] master, String node) {
        checkMaster(master);
        Objects.requireNonNull(node, "node");
        if (node.isEmpty()) {
            throw new IllegalArgumentException("node name must not be empty");
        }
        return hmac(master, (NODE_KEY_LABEL + node).getBytes(StandardCharsets.UTF_8));
    }

    /** The public id of {@code master} (16 hex digits), carried by every record signed with a key derived from it. */
    public static String keyId(byte[] master) {
        checkMaster(master);
        return HexFormat.of().formatHex(hmac(master, KEY_ID_LABEL.getBytes(StandardCharsets.UTF_8)), 0, 8);
    }

    /** The bytes of a master secret as configured (its UTF-8 encoding), checked for length. */
    public static byte[] masterFromSecret(String secret) {
        Objects.requireNonNull(secret, "secret");
        byte[] master = secret.strip().getBytes(StandardCharsets.UTF_8);
        checkMaster(master);
        return master;
    }

    private static void checkMaster(byte[] master) {
        Objects.requireNonNull(master, "master");
        if (master.length < MIN_MASTER_BYTES) {
            throw new IllegalArgumentException("the cluster secret must be at least " + MIN_MASTER_BYTES
                    + " bytes (e.g. openssl rand -base64 32), got " + master.length);
        }
    }

    // Mac is not thread-safe and Mac.getInstance costs a provider lookup (several µs, more than the HMAC
    // itself): one per thread, re-keyed per use. Callers use it for one complete HMAC at a time.
    private static final ThreadLocal<Mac> MAC = ThreadLocal.withInitial(() -> {
        try {
            return Mac.getInstance(ALGORITHM);
        } catch (GeneralSecurityException e) {
            // HmacSHA256 is mandatory in every Java platform: this is not an input error.
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    });

    /** This thread's HMAC-SHA256, keyed with {@code key}. */
    static Mac mac(SecretKeySpec key) {
        Mac mac = MAC.get();
        try {
            mac.init(key);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot key HmacSHA256", e);
        }
        return mac;
    }

    static byte[] hmac(byte[] key, byte[] message) {
        return mac(new SecretKeySpec(key, ALGORITHM)).doFinal(message);
    }
}
