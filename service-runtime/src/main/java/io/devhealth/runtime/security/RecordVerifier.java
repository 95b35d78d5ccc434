package io.devhealth.runtime.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.crypto.spec.SecretKeySpec;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * Checks that a record was signed by the node its {@value RecordSignature#NODE_HEADER} header names,
 * with a key derived from one of the cluster's valid master secrets (at most two during a rotation).
 * Holds the master secrets, never a node key table: a node key is re-derived per record (one HMAC of
 * a few dozen bytes). Signatures are compared in constant time. Thread-safe.
 */
public final class RecordVerifier {

    /** At most this many master secrets are valid at once: the current one and the one being rotated out. */
    public static final int MAX_MASTERS = 2;

    private final Map<String, byte[]> masters;

    /** The outcome: the authenticated node, or why the record is refused (quoting no secret). */
    public record Verification(String node, String failure) {
        public boolean valid() {
            return failure == null;
        }
    }

    /** @param masters the valid master secrets, current first; 1 or 2 of them, distinct */
    public RecordVerifier(List<byte[]> masters) {
        Objects.requireNonNull(masters, "masters");
        if (masters.isEmpty() || masters.size() > MAX_MASTERS) {
            throw new IllegalArgumentException("1 to " + MAX_MASTERS + " master secrets, got " + masters.size());
        }
        Map<String, byte[]> byId = new LinkedHashMap<>();
        for (byte[] master : masters) {
            if (byId.put(NodeKeys.keyId(master), master.clone()) != null) {
                throw new IllegalArgumentException("the same master secret is configured twice");
            }
        }
        this.masters = Map.copyOf(byId);
    }

    /** The key ids this verifier accepts, for logs. */
    public List<String> keyIds() {
        return new ArrayList<>(masters.keySet());
    }

    /** Verifies the record of {@code value} bytes on {@code topic} carrying {@code headers}. */
    public Verification verify(String topic, Headers headers, byte[] value) {
        byte[] nodeBytes = last(headers, RecordSignature.NODE_HEADER);
        if (nodeBytes == null || nodeBytes.length == 0) {
            return new Verification(null, "no " + RecordSignature.NODE_HEADER + " header");
        }
        String node = new String(nodeBytes, StandardCharsets.UTF_8);
        byte[] keyIdBytes = last(headers, RecordSignature.KEY_ID_HEADER);
        byte[] signature = last(headers, RecordSignature.SIGNATURE_HEADER);
        if (keyIdBytes == null || signature == null) {
            return new Verification(node, "record for node '" + printable(node) + "' is not signed (no "
                    + (keyIdBytes == null ? RecordSignature.KEY_ID_HEADER : RecordSignature.SIGNATURE_HEADER) + " header)");
        }
        String keyId = new String(keyIdBytes, StandardCharsets.US_ASCII);
        byte[] master = masters.get(keyId);
        if (master == null) {
            return new Verification(node, "record for node '" + printable(node) + "' signed under unknown key id '"
                    + printable(keyId) + "' (accepted: " + String.join(",", masters.keySet()) + ")");
        }
        SecretKeySpec nodeKey = RecordSignature.keySpec(NodeKeys.deriveNodeKey(master, node));
        byte[] expected = RecordSignature.compute(nodeKey, nodeBytes, topic, value);
        if (!MessageDigest.isEqual(expected, signature)) {
            return new Verification(node, "record for node '" + printable(node) + "' has an invalid signature (key id "
                    + keyId + "): not signed with that node's key, or altered");
        }
        return new Verification(node, null);
    }

    /** Like {@link #verify} but throws. @return the authenticated node */
    public String require(String topic, Headers headers, byte[] value) {
        Verification verification = verify(topic, headers, value);
        if (!verification.valid()) {
            throw new RecordAuthenticationException(verification.failure());
        }
        return verification.node();
    }

    private static byte[] last(Headers headers, String name) {
        Header header = headers == null ? null : headers.lastHeader(name);
        return header == null ? null : header.value();
    }

    /** At most 64 printable ASCII characters of attacker-chosen text, for reasons and logs. */
    static String printable(String text) {
        StringBuilder out = new StringBuilder(Math.min(text.length(), 64));
        for (int i = 0; i < text.length() && out.length() < 64; i++) {
            char c = text.charAt(i);
            out.append(c >= 0x20 && c < 0x7f ? c : '?');
        }
        return out.toString();
    }

    @Override
    public String toString() {
        return "RecordVerifier[keyIds=" + masters.keySet() + "]";
    }
}
