package io.devhealth.runtime.security;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The signature of one collector record: {@code HMAC-SHA256(node key, len(node) ‖ node ‖ len(topic) ‖
 * topic ‖ len(value) ‖ value)}, lengths as 4-byte big-endian integers (-1 for a null value), so that
 * no two different (node, topic, value) triples sign the same bytes. The topic is included so a
 * record cannot be replayed onto another topic (an inventory as a report); the key is not, because
 * the processor requires the signed node header to equal the key ({@code NodeIdentityCheck}).
 *
 * <p>The headers a signed record carries are named here; collector and processor share them.
 */
public final class RecordSignature {

    /** The node the record speaks for (UTF-8). */
    public static final String NODE_HEADER = "devhealth.node";
    /** The id of the master secret the signing key was derived from ({@link NodeKeys#keyId}, ASCII hex). */
    public static final String KEY_ID_HEADER = "devhealth.key.id";
    /** The 32 raw bytes of the HMAC. */
    public static final String SIGNATURE_HEADER = "devhealth.signature";
    /** Length of a signature in bytes. */
    public static final int LENGTH = 32;

    private RecordSignature() {}

    /** The signature of ({@code node}, {@code topic}, {@code value}) under {@code nodeKey}. */
    public static byte[] compute(SecretKeySpec nodeKey, byte[] node, String topic, byte[] value) {
        Mac mac = NodeKeys.mac(nodeKey);
        byte[] topicBytes = topic.getBytes(StandardCharsets.UTF_8);
        ByteBuffer length = ByteBuffer.allocate(4);
        mac.update(length.putInt(0, node.length).array());
        mac.update(node);
        mac.update(length.putInt(0, topicBytes.length).array());
        mac.update(topicBytes);
        mac.update(length.putInt(0, value == null ? -1 : value.length).array());
        if (value != null) {
            mac.update(value);
        }
        return mac.doFinal();
    }

    static SecretKeySpec keySpec(byte[] key) {
        return new SecretKeySpec(key, NodeKeys.ALGORITHM);
    }
}
