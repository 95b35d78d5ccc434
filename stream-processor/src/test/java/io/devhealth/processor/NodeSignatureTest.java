package io.devhealth.processor;

import static io.devhealth.processor.TopologyFixture.EPOCH;
import static io.devhealth.processor.TopologyFixture.NODE;
import static io.devhealth.processor.TopologyFixture.T0;
import static io.devhealth.processor.TopologyFixture.report;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.runtime.security.NodeKeyCredential;
import io.devhealth.runtime.security.RecordSigner;
import io.devhealth.runtime.security.RecordVerifier;
import io.devhealth.schema.avro.ClaimAllocation;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.ContainerAllocation;
import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.avro.NodeHeartbeat;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceStatus;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/**
 * With principals enforced, only a record signed with its node's key changes that node's state:
 * the serdes verify the signature, NodeIdentityCheck that the signed node is the key.
 */
class NodeSignatureTest {

    private static final byte[] MASTER = "current-cluster-secret-0123456789abcdef".getBytes(StandardCharsets.UTF_8);
    private static final byte[] PREVIOUS = "previous-cluster-secret-0123456789abcdef".getBytes(StandardCharsets.UTF_8);

    private static TopologyFixture enforcing(byte[]... masters) {
        return new TopologyFixture(o -> o.enforcePrincipals(true), Optional.of(new RecordVerifier(List.of(masters))));
    }

    private static double rejected(TopologyFixture fixture, String input, String check) {
        var counter = fixture.meters.find("devhealth.processor.node.identity.rejected").tag("input", input).tag("check", check).counter();
        return counter == null ? 0 : counter.count();
    }

    private static RecordSigner signer(byte[] master, String node) {
        return new RecordSigner(NodeKeyCredential.issue(master, node));
    }

    private static NodeEvent event(String node, String device, HealthStatus health, long sequence) {
        return new NodeEvent(report(device, health, T0.plusSeconds(sequence)).setNode(node)
                .setCollectorEpoch(EPOCH).setSequence(sequence).build());
    }

    /** What a collector sends: the exact value bytes, signed. */
    private static void sendSigned(TopologyFixture fixture, RecordSigner signer, String key, NodeEvent value, long sequence) {
        sendSigned(fixture, signer, key, value, T0.plusSeconds(sequence));
    }

    private static void sendSigned(TopologyFixture fixture, RecordSigner signer, String key, NodeEvent value, Instant timestamp) {
        String topic = fixture.topics.nodeEvents();
        byte[] bytes = fixture.serdes.nodeEvents().serializer().serialize(topic, value);
        Headers headers = new RecordHeaders();
        signer.sign(topic, bytes, headers);
        fixture.rawEvents.pipeInput(new TestRecord<>(key, bytes, headers, timestamp));
    }

    @Test
    void shouldApplyARecordSignedWithItsNodesKey() {
        try (TopologyFixture fixture = enforcing(MASTER)) {
            sendSigned(fixture, signer(MASTER, NODE), NODE, event(NODE, "gpu-0", HealthStatus.UNHEALTHY, 1), 1);

            assertThat(fixture.deadLetters.isEmpty()).isTrue();
            assertThat(fixture.transitions.readValuesToList()).singleElement()
                    .satisfies(t -> assertThat(t.getTo()).isEqualTo(HealthStatus.UNHEALTHY));
        }
    }

    @Test
    void shouldDeadLetterARecordSignedByNodeAButKeyedAsNodeB() {
        try (TopologyFixture fixture = enforcing(MASTER)) {
            // Node A's collector, compromised, writes node B's facts under B's key with its own (valid) signature.
            sendSigned(fixture, signer(MASTER, NODE), "node-b", event("node-b", "gpu-0", HealthStatus.UNHEALTHY, 1), 1);

            assertThat(fixture.deadLetters.readValuesToList()).singleElement().satisfies(letter -> {
                assertThat(letter.getReason()).contains("devhealth.node='" + NODE + "'").contains("node-b");
                assertThat(letter.getKey()).isNotNull();
            });
            assertThat(rejected(fixture, "node-events", "header")).isEqualTo(1.0);
            assertThat(fixture.transitions.isEmpty()).isTrue();
            assertThat(fixture.podStatus.isEmpty()).isTrue();
        }
    }

    @Test
    void shouldDeadLetterAHeartbeatSignedByNodeAThatSaysNodeBsDriverIsDown() {
        try (TopologyFixture fixture = enforcing(MASTER)) {
            RecordSigner nodeB = signer(MASTER, "node-b");
            sendSigned(fixture, nodeB, "node-b", event("node-b", "gpu-0", HealthStatus.HEALTHY, 1), 1);
            // Node A's collector, compromised, says node B's driver is down, under B's key with its own (valid) signature.
            NodeHeartbeat forged = TopologyFixture.heartbeatOf(T0.plusSeconds(2), SourceStatus.DOWN).setNode("node-b")
                    .setCollectorEpoch(EPOCH).setSequence(2).build();
            sendSigned(fixture, signer(MASTER, NODE), "node-b", new NodeEvent(forged), 2);
            // Keep-alives count only from a source the node says is up: had the forged heartbeat been applied,
            // B's device would go Unknown 30 s after its last change although its driver kept saying Healthy.
            for (int i = 1; i <= 4; i++) {
                Instant at = T0.plusSeconds(1 + 15L * i);
                NodeEvent keepAlive = new NodeEvent(report("gpu-0", HealthStatus.HEALTHY, at).setNode("node-b")
                        .setKind(ReportKind.KEEPALIVE).setCollectorEpoch(EPOCH).setSequence(2 + i).build());
                sendSigned(fixture, nodeB, "node-b", keepAlive, at);
            }

            assertThat(fixture.deadLetters.readValuesToList()).singleElement().satisfies(letter ->
                    assertThat(letter.getReason()).contains("devhealth.node='" + NODE + "'").contains("node-b"));
            assertThat(rejected(fixture, "node-events", "header")).isEqualTo(1.0);
            assertThat(fixture.transitions.readValuesToList()).as("B's device stays Healthy")
                    .extracting(t -> t.getNode() + " " + t.getTo()).containsExactly("node-b HEALTHY");
        }
    }

    @Test
    void shouldDeadLetterAClaimOfNodeBSignedWithNodeAsKey() {
        try (TopologyFixture fixture = enforcing(MASTER)) {
            NodeKeyCredential mine = NodeKeyCredential.issue(MASTER, NODE);
            RecordSigner impostor = new RecordSigner(new NodeKeyCredential(mine.keyId(), "node-b", mine.key()));
            sendSigned(fixture, impostor, "node-b", event("node-b", "gpu-0", HealthStatus.UNHEALTHY, 1), 1);

            assertThat(fixture.deadLetters.readValuesToList()).singleElement().satisfies(letter -> {
                assertThat(letter.getReason()).startsWith("unauthenticated record:").contains("invalid signature");
                assertThat(letter.getValue()).as("original bytes kept").isNotNull();
                assertThat(letter.getErrorClass()).endsWith("RecordAuthenticationException");
            });
            assertThat(rejected(fixture, "node-events", "signature")).isEqualTo(1.0);
            assertThat(fixture.meters.get("devhealth.processor.dead.letters").tag("kind", "authentication").counter().count())
                    .isEqualTo(1.0);
            assertThat(fixture.transitions.isEmpty()).isTrue();
        }
    }

    @Test
    void shouldDeadLetterUnsignedAndTamperedRecordsAndGoOn() {
        try (TopologyFixture fixture = enforcing(MASTER)) {
            String topic = fixture.topics.nodeEvents();
            byte[] bytes = fixture.serdes.nodeEvents().serializer().serialize(topic, event(NODE, "gpu-0", HealthStatus.UNHEALTHY, 1));
            Headers stampedOnly = new RecordHeaders().add("devhealth.node", NODE.getBytes(StandardCharsets.UTF_8));
            fixture.rawEvents.pipeInput(new TestRecord<>(NODE, bytes, stampedOnly, T0.plusSeconds(1)));

            Headers signed = new RecordHeaders();
            signer(MASTER, NODE).sign(topic, bytes, signed);
            byte[] tampered = fixture.serdes.nodeEvents().serializer().serialize(topic, event(NODE, "gpu-1", HealthStatus.UNHEALTHY, 1));
            fixture.rawEvents.pipeInput(new TestRecord<>(NODE, tampered, signed, T0.plusSeconds(1)));

            sendSigned(fixture, signer(MASTER, NODE), NODE, event(NODE, "gpu-2", HealthStatus.UNHEALTHY, 2), 2);

            assertThat(fixture.deadLetters.readValuesToList()).extracting(DeadLetter::getReason)
                    .satisfiesExactly(r -> assertThat(r).contains("not signed"), r -> assertThat(r).contains("invalid signature"));
            assertThat(rejected(fixture, "node-events", "signature")).isEqualTo(2.0);
            assertThat(fixture.transitions.readValuesToList()).as("only the signed record applied")
                    .singleElement().satisfies(t -> assertThat(t.getDevice().getDevice()).isEqualTo("gpu-2"));
        }
    }

    @Test
    void shouldVerifyAllocationsToo() {
        try (TopologyFixture fixture = enforcing(MASTER)) {
            String topic = fixture.topics.nodeEvents();
            byte[] bytes = fixture.serdes.nodeEvents().serializer().serialize(topic,
                    new NodeEvent(NodeAllocations.newBuilder().setNode(NODE).setObservedAt(T0).build()));
            fixture.rawEvents.pipeInput(new TestRecord<>(NODE, bytes, new RecordHeaders(), T0));
            Headers signedForAnotherTopic = new RecordHeaders();
            signer(MASTER, NODE).sign(fixture.topics.healthTransitions(), bytes, signedForAnotherTopic);
            fixture.rawEvents.pipeInput(new TestRecord<>(NODE, bytes, signedForAnotherTopic, T0));

            assertThat(fixture.deadLetters.readValuesToList()).extracting(DeadLetter::getSourceTopic).containsExactly(topic, topic);
            assertThat(rejected(fixture, "node-events", "signature")).as("unsigned, and signed for another topic").isEqualTo(2.0);
        }
    }

    @Test
    void shouldAcceptKeysOfThePreviousSecretDuringARotation() {
        try (TopologyFixture fixture = enforcing(MASTER, PREVIOUS)) {
            sendSigned(fixture, signer(PREVIOUS, NODE), NODE, event(NODE, "gpu-0", HealthStatus.UNHEALTHY, 1), 1);
            sendSigned(fixture, signer(MASTER, NODE), NODE, event(NODE, "gpu-0", HealthStatus.HEALTHY, 2), 2);

            assertThat(fixture.deadLetters.isEmpty()).isTrue();
            assertThat(fixture.transitions.readValuesToList()).hasSize(2);
        }
        try (TopologyFixture fixture = enforcing(MASTER)) {
            sendSigned(fixture, signer(PREVIOUS, NODE), NODE, event(NODE, "gpu-0", HealthStatus.UNHEALTHY, 1), 1);

            assertThat(fixture.deadLetters.readValuesToList()).singleElement()
                    .satisfies(letter -> assertThat(letter.getReason()).contains("unknown key id"));
        }
    }

    @Test
    void shouldReachPodStatusThroughStoresWrittenFromSignedRecords() {
        // The verifying serdes also back the allocation store: what the processor stored must read back unsigned.
        try (TopologyFixture fixture = enforcing(MASTER)) {
            String topic = fixture.topics.nodeEvents();
            NodeAllocations allocations = NodeAllocations.newBuilder().setNode(NODE).setObservedAt(T0)
                    .setCollectorEpoch(EPOCH).setSequence(1)
                    .setPods(List.of(new PodAllocation("ml", "train", List.of(ContainerAllocation.newBuilder().setName("main")
                            .setClaims(List.of(new ClaimAllocation("train-gpu", "ml", List.of(ClaimDevice.newBuilder()
                                    .setDriver(TopologyFixture.DRIVER).setPool(NODE).setDevice("gpu-0").build())))).build()))))
                    .build();
            byte[] bytes = fixture.serdes.nodeEvents().serializer().serialize(topic, new NodeEvent(allocations));
            Headers headers = new RecordHeaders();
            signer(MASTER, NODE).sign(topic, bytes, headers);
            fixture.rawEvents.pipeInput(new TestRecord<>(NODE, bytes, headers, T0));
            sendSigned(fixture, signer(MASTER, NODE), NODE, event(NODE, "gpu-0", HealthStatus.UNHEALTHY, 2), 2);

            assertThat(fixture.deadLetters.isEmpty()).isTrue();
            assertThat(fixture.podStatus.readValuesToList()).isNotEmpty().last()
                    .satisfies(status -> assertThat(status.toString()).contains("train").contains("UNHEALTHY"));
        }
    }
}
