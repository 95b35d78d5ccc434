package io.devhealth.runtime.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

class RecordSigningTest {

    private static final byte[] MASTER = "k3V6m1d7h2cQ0s9rW4yX8eT5uB1nA6zL0pJ2gF7iO3o=".getBytes(StandardCharsets.UTF_8);
    private static final byte[] NEXT_MASTER = "Zr8Lw2Qy7Vt1Ns5Kp0Hj3Gd6Fb9Cx4Mz8Ae2Ru7Yi1o=".getBytes(StandardCharsets.UTF_8);
    private static final String TOPIC = "devhealth.node-events";
    private static final byte[] VALUE = {0, 0, 0, 0, 7, 2, 42, 1, 2, 3};

    private static Headers signed(byte[] master, String node, String topic, byte[] value) {
        Headers headers = new RecordHeaders();
        new RecordSigner(NodeKeyCredential.issue(master, node)).sign(topic, value, headers);
        return headers;
    }

    @Test
    void shouldVerifyARecordSignedWithItsNodesKey() {
        Headers headers = signed(MASTER, "node-a", TOPIC, VALUE);

        RecordVerifier.Verification verification = new RecordVerifier(List.of(MASTER)).verify(TOPIC, headers, VALUE);

        assertThat(verification.valid()).as(verification.failure()).isTrue();
        assertThat(verification.node()).isEqualTo("node-a");
        assertThat(headers.lastHeader(RecordSignature.NODE_HEADER).value()).asString(StandardCharsets.UTF_8).isEqualTo("node-a");
        assertThat(headers.lastHeader(RecordSignature.SIGNATURE_HEADER).value()).hasSize(RecordSignature.LENGTH);
    }

    @Test
    void shouldDeriveDistinctStableKeysPerNodeAndMaster() {
        assertThat(NodeKeys.deriveNodeKey(MASTER, "node-a")).isEqualTo(NodeKeys.deriveNodeKey(MASTER, "node-a"))
                .isNotEqualTo(NodeKeys.deriveNodeKey(MASTER, "node-b"))
                .isNotEqualTo(NodeKeys.deriveNodeKey(NEXT_MASTER, "node-a"))
                .hasSize(32);
        assertThat(NodeKeys.keyId(MASTER)).matches("[0-9a-f]{16}").isNotEqualTo(NodeKeys.keyId(NEXT_MASTER));
    }

    @Test
    void shouldRejectATamperedValue() {
        Headers headers = signed(MASTER, "node-a", TOPIC, VALUE);
        byte[] tampered = VALUE.clone();
        tampered[tampered.length - 1] ^= 1;

        RecordVerifier verifier = new RecordVerifier(List.of(MASTER));

        assertThat(verifier.verify(TOPIC, headers, tampered).failure()).contains("invalid signature");
        assertThat(verifier.verify(TOPIC, headers, null).failure()).as("value dropped").contains("invalid signature");
    }

    @Test
    void shouldRejectARecordReplayedOntoAnotherTopic() {
        Headers headers = signed(MASTER, "node-a", "devhealth.health-transitions", VALUE);

        assertThat(new RecordVerifier(List.of(MASTER)).verify(TOPIC, headers, VALUE).valid()).isFalse();
    }

    @Test
    void shouldRejectANodeHeaderChangedToAnotherNode() {
        Headers headers = signed(MASTER, "node-a", TOPIC, VALUE);
        headers.remove(RecordSignature.NODE_HEADER).add(RecordSignature.NODE_HEADER, "node-b".getBytes(StandardCharsets.UTF_8));

        RecordVerifier.Verification verification = new RecordVerifier(List.of(MASTER)).verify(TOPIC, headers, VALUE);

        assertThat(verification.valid()).isFalse();
        assertThat(verification.failure()).contains("node-b").contains("invalid signature");
    }

    @Test
    void shouldNotLetOneNodesKeySignForAnotherNode() {
        // A compromised node-a builds a credential claiming node-b with its own key.
        NodeKeyCredential stolen = NodeKeyCredential.issue(MASTER, "node-a");
        NodeKeyCredential forged = new NodeKeyCredential(stolen.keyId(), "node-b", stolen.key());
        Headers headers = new RecordHeaders();
        new RecordSigner(forged).sign(TOPIC, VALUE, headers);

        assertThat(new RecordVerifier(List.of(MASTER)).verify(TOPIC, headers, VALUE).failure()).contains("invalid signature");
    }

    @Test
    void shouldRejectMissingHeadersAndUnknownKeyIds() {
        RecordVerifier verifier = new RecordVerifier(List.of(MASTER));

        assertThat(verifier.verify(TOPIC, new RecordHeaders(), VALUE).failure()).contains("no devhealth.node header");
        Headers unsigned = new RecordHeaders().add(RecordSignature.NODE_HEADER, "node-a".getBytes(StandardCharsets.UTF_8));
        assertThat(verifier.verify(TOPIC, unsigned, VALUE).failure()).contains("not signed");
        Headers noSignature = signed(MASTER, "node-a", TOPIC, VALUE).remove(RecordSignature.SIGNATURE_HEADER);
        assertThat(verifier.verify(TOPIC, noSignature, VALUE).failure()).contains("not signed");
        Headers shortSignature = signed(MASTER, "node-a", TOPIC, VALUE).remove(RecordSignature.SIGNATURE_HEADER)
                .add(RecordSignature.SIGNATURE_HEADER, new byte[3]);
        assertThat(verifier.verify(TOPIC, shortSignature, VALUE).failure()).contains("invalid signature");

        Headers otherCluster = signed(NEXT_MASTER, "node-a", TOPIC, VALUE);
        assertThat(verifier.verify(TOPIC, otherCluster, VALUE).failure()).contains("unknown key id").contains(NodeKeys.keyId(MASTER));
        assertThatThrownBy(() -> verifier.require(TOPIC, otherCluster, VALUE)).isInstanceOf(RecordAuthenticationException.class);
    }

    @Test
    void shouldAcceptBothMastersDuringARotation() {
        RecordVerifier rotating = new RecordVerifier(List.of(NEXT_MASTER, MASTER));

        assertThat(rotating.verify(TOPIC, signed(MASTER, "node-a", TOPIC, VALUE), VALUE).valid()).as("old key, not yet rolled").isTrue();
        assertThat(rotating.verify(TOPIC, signed(NEXT_MASTER, "node-a", TOPIC, VALUE), VALUE).valid()).as("new key").isTrue();
        assertThat(new RecordVerifier(List.of(NEXT_MASTER)).verify(TOPIC, signed(MASTER, "node-a", TOPIC, VALUE), VALUE).valid())
                .as("old master retired").isFalse();
        assertThatThrownBy(() -> new RecordVerifier(List.of(MASTER, MASTER))).hasMessageContaining("twice");
        assertThatThrownBy(() -> new RecordVerifier(List.of(MASTER, NEXT_MASTER, "x".repeat(40).getBytes(StandardCharsets.UTF_8))))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldRoundTripACredentialWithoutShowingTheKey() {
        NodeKeyCredential credential = NodeKeyCredential.issue(MASTER, "gpu-node-17.example");

        NodeKeyCredential parsed = NodeKeyCredential.parse(credential.format() + "\n");

        assertThat(parsed).isEqualTo(credential);
        assertThat(parsed.node()).isEqualTo("gpu-node-17.example");
        assertThat(credential.format()).startsWith("v1:" + NodeKeys.keyId(MASTER) + ":gpu-node-17.example:");
        String encodedKey = credential.format().substring(credential.format().lastIndexOf(':') + 1);
        assertThat(credential.toString()).doesNotContain(encodedKey).contains("[hidden]");
        assertThatThrownBy(() -> NodeKeyCredential.parse("v2:abc")).hasMessageContaining("not a devhealth node key");
        assertThatThrownBy(() -> NodeKeyCredential.parse("v1:0123456789abcdef:node-a:!!!")).hasMessageContaining("base64url")
                .hasMessageNotContaining("!!!");
    }

    @Test
    void shouldRefuseAShortClusterSecret() {
        assertThatThrownBy(() -> NodeKeys.masterFromSecret("too-short")).hasMessageContaining("at least 32 bytes");
        assertThat(NodeKeys.masterFromSecret(new String(MASTER, StandardCharsets.UTF_8) + "\n")).isEqualTo(MASTER);
    }
}
