package io.devhealth.runtime.security;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import javax.crypto.spec.SecretKeySpec;
import org.apache.kafka.common.header.Headers;

/**
 * Stamps a collector's records with the node they speak for and, holding that node's key, signs them
 * ({@link RecordSignature}). Thread-safe.
 */
public final class RecordSigner {

    private final String node;
    private final byte[] nodeBytes;
    private final byte[] keyId;
    private final SecretKeySpec key;

    public RecordSigner(NodeKeyCredential credential) {
        Objects.requireNonNull(credential, "credential");
        this.node = credential.node();
        this.nodeBytes = node.getBytes(StandardCharsets.UTF_8);
        this.keyId = credential.keyId().getBytes(StandardCharsets.US_ASCII);
        this.key = RecordSignature.keySpec(credential.key());
    }

    /** The node this signer speaks for. */
    public String node() {
        return node;
    }

    /**
     * Adds the node, key id and signature headers for a record of {@code value} bytes to {@code topic},
     * replacing any such headers already there.
     */
    public void sign(String topic, byte[] value, Headers headers) {
        byte[] signature = RecordSignature.compute(key, nodeBytes, topic, value);
        headers.remove(RecordSignature.NODE_HEADER);
        headers.remove(RecordSignature.KEY_ID_HEADER);
        headers.remove(RecordSignature.SIGNATURE_HEADER);
        headers.add(RecordSignature.NODE_HEADER, nodeBytes.clone());
        headers.add(RecordSignature.KEY_ID_HEADER, keyId.clone());
        headers.add(RecordSignature.SIGNATURE_HEADER, signature);
    }

    @Override
    public String toString() {
        return "RecordSigner[node=" + node + ", keyId=" + new String(keyId, StandardCharsets.US_ASCII) + "]";
    }
}
