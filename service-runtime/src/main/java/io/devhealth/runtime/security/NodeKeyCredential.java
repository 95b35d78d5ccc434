package io.devhealth.runtime.security;

import java.util.Arrays;
import java.util.Base64;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * What a collector is given to sign its records: its node's derived key, the node it is for and the
 * id of the master secret it came from, as one line an operator stores in the node's Secret:
 * {@code v1:<key id>:<node>:<base64url key>} (no part can contain a colon: key ids are hex, node
 * names are DNS subdomains, the key is unpadded base64url).
 *
 * <p>{@link #toString()} never shows the key.
 */
public final class NodeKeyCredential {

    private static final String VERSION = "v1";
    private static final Pattern KEY_ID = Pattern.compile("[0-9a-f]{16}");
    private static final int KEY_BYTES = 32;

    private final String keyId;
    private final String node;
    private final byte[] key;

    public NodeKeyCredential(String keyId, String node, byte[] key) {
        this.keyId = Objects.requireNonNull(keyId, "keyId");
        this.node = Objects.requireNonNull(node, "node");
        Objects.requireNonNull(key, "key");
        if (!KEY_ID.matcher(keyId).matches()) {
            throw new IllegalArgumentException("key id must be 16 lower-case hex digits");
        }
        if (node.isEmpty() || node.indexOf(':') >= 0) {
            throw new IllegalArgumentException("node name must be non-empty and contain no ':'");
        }
        if (key.length != KEY_BYTES) {
            throw new IllegalArgumentException("node key must be " + KEY_BYTES + " bytes, got " + key.length);
        }
        this.key = key.clone();
    }

    /** The credential of {@code node} under the cluster secret {@code master}. */
    public static NodeKeyCredential issue(byte[] master, String node) {
        return new NodeKeyCredential(NodeKeys.keyId(master), node, NodeKeys.deriveNodeKey(master, node));
    }

    /**
     * Parses the line {@link #format()} wrote.
     *
     * @throws IllegalArgumentException naming what is wrong, never quoting the key
     */
    public static NodeKeyCredential parse(String text) {
        Objects.requireNonNull(text, "credential");
        String[] parts = text.strip().split(":", -1);
        if (parts.length != 4 || !VERSION.equals(parts[0])) {
            throw new IllegalArgumentException("not a devhealth node key (expected " + VERSION + ":<key id>:<node>:<key>)");
        }
        byte[] key;
        try {
            key = Base64.getUrlDecoder().decode(parts[3]);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("node key is not base64url");
        }
        return new NodeKeyCredential(parts[1], parts[2], key);
    }

    /** The one-line form, to store in a Secret. It contains the key: never log it. */
    public String format() {
        return VERSION + ":" + keyId + ":" + node + ":" + Base64.getUrlEncoder().withoutPadding().encodeToString(key);
    }

    public String keyId() {
        return keyId;
    }

    public String node() {
        return node;
    }

    /** A copy of the key. */
    public byte[] key() {
        return key.clone();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof NodeKeyCredential that && keyId.equals(that.keyId) && node.equals(that.node)
                && java.security.MessageDigest.isEqual(key, that.key);
    }

    @Override
    public int hashCode() {
        return Objects.hash(keyId, node, Arrays.hashCode(key));
    }

    @Override
    public String toString() {
        return "NodeKeyCredential[node=" + node + ", keyId=" + keyId + ", key=[hidden]]";
    }
}
