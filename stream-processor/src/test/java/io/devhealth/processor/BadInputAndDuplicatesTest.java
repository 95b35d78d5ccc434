package io.devhealth.processor;

import static io.devhealth.processor.TopologyFixture.NODE;
import static io.devhealth.processor.TopologyFixture.T0;
import static io.devhealth.processor.TopologyFixture.report;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.processor.internals.input.InvalidInputException;
import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.avro.NodeHeartbeat;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.avro.SourceState;
import io.devhealth.schema.avro.SourceStatus;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Delivery and bad input: a record already applied (same collector epoch and sequence, or lower) changes nothing and is
 * counted; a poison record becomes a dead letter with its reason, and processing goes on.
 */
class BadInputAndDuplicatesTest {

    private final TopologyFixture fixture = new TopologyFixture();

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    private double deadLetterCount() {
        return fixture.meters.find("devhealth.processor.dead.letters").counters().stream().mapToDouble(c -> c.count()).sum();
    }

    @Test
    void shouldIgnoreAReplayedRecordEntirely() {
        fixture.allocate("train-0", "gpu-0");
        DeviceHealthReport unhealthy = report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(1)).setMessage("XID 79")
                .setCollectorEpoch(TopologyFixture.EPOCH).setSequence(100).build();
        DeviceHealthReport healthy = report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(2))
                .setCollectorEpoch(TopologyFixture.EPOCH).setSequence(101).build();
        fixture.sendRaw(unhealthy, T0.plusSeconds(1));
        fixture.sendRaw(healthy, T0.plusSeconds(2));
        fixture.transitions.readValuesToList();
        fixture.podStatus.readValuesToList();

        // A producer retry or a spool replay delivers the Unhealthy report again.
        fixture.sendRaw(unhealthy, T0.plusSeconds(3));

        assertThat(fixture.transitions.isEmpty()).isTrue();
        assertThat(fixture.podStatus.isEmpty()).isTrue();
        assertThat(fixture.meters.get("devhealth.processor.duplicates").tag("kind", "reports").counter().count()).isEqualTo(1.0);
    }

    @Test
    void shouldCountADuplicateWithoutApplyingIt() {
        fixture.allocate("train-0", "gpu-0");
        fixture.sendRaw(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1))
                .setCollectorEpoch(TopologyFixture.EPOCH).setSequence(100).build(), T0.plusSeconds(1));
        fixture.transitions.readValuesToList();
        fixture.podStatus.readValuesToList();

        // Same (epoch, sequence), different and newer content: were it applied, the device would turn Unhealthy.
        fixture.sendRaw(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(2)).setMessage("XID 79")
                .setCollectorEpoch(TopologyFixture.EPOCH).setSequence(100).build(), T0.plusSeconds(2));

        assertThat(fixture.meters.get("devhealth.processor.duplicates").tag("kind", "reports").counter().count()).isEqualTo(1.0);
        assertThat(fixture.transitions.isEmpty()).isTrue();
        assertThat(fixture.podStatus.isEmpty()).isTrue();
    }

    @Test
    void shouldDropAReplayedHeartbeat() {
        fixture.allocate("train-0", "gpu-0");
        fixture.sendRaw(heartbeat(T0, SourceStatus.DOWN, 10), T0);
        fixture.sendRaw(heartbeat(T0.plusSeconds(1), SourceStatus.UP, 11), T0.plusSeconds(1));
        fixture.sendRaw(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(2))
                .setCollectorEpoch(TopologyFixture.EPOCH).setSequence(12).build(), T0.plusSeconds(2));
        // The heartbeat that said the driver was down, delivered again.
        fixture.sendRaw(heartbeat(T0, SourceStatus.DOWN, 10), T0.plusSeconds(3));
        fixture.transitions.readValuesToList();

        // Keep-alives count only from a source that is up: had the replay been applied, the device would
        // go Unknown at T0 + 32 s although its driver kept saying Healthy.
        for (int i = 1; i <= 4; i++) {
            fixture.sendRaw(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(2 + 15L * i)).setKind(ReportKind.KEEPALIVE)
                    .setCollectorEpoch(TopologyFixture.EPOCH).setSequence(12 + i).build(), T0.plusSeconds(2 + 15L * i));
        }

        assertThat(fixture.meters.get("devhealth.processor.duplicates").tag("kind", "reports").counter().count()).isEqualTo(1.0);
        assertThat(fixture.transitions.isEmpty()).as("still Healthy").isTrue();
    }

    private static NodeHeartbeat heartbeat(Instant at, SourceStatus driver, long sequence) {
        return NodeHeartbeat.newBuilder().setNode(NODE).setObservedAt(at)
                .setSources(List.of(SourceState.newBuilder().setSource(SourceKind.DRA).setSourceName(TopologyFixture.DRIVER)
                        .setState(driver).setSince(at).build()))
                .setCollectorEpoch(TopologyFixture.EPOCH).setSequence(sequence).build();
    }

    @Test
    void shouldDropRecordsOfAnEarlierCollectorRunButAcceptTheNewRun() {
        DeviceHealthReport newRun = report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(10))
                .setCollectorEpoch(TopologyFixture.EPOCH + 5_000).setSequence(1).build();
        DeviceHealthReport oldRun = report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(11))
                .setCollectorEpoch(TopologyFixture.EPOCH).setSequence(900).build();
        fixture.sendRaw(newRun, T0.plusSeconds(10));
        fixture.sendRaw(oldRun, T0.plusSeconds(11));

        assertThat(fixture.transitions.readValuesToList()).extracting(HealthTransition::getTo).containsExactly(HealthStatus.HEALTHY);
    }

    @Test
    void shouldIgnoreAReplayedAllocationSnapshot() {
        fixture.allocate("train-0", "gpu-0");
        fixture.allocate("train-1", "gpu-0");
        fixture.podStatus.readValuesToList();
        // An old snapshot (lower sequence) would bring train-0 back: it must not.
        byte[] oldSnapshot = fixture.encode(new NodeEvent(io.devhealth.schema.avro.NodeAllocations.newBuilder().setNode(NODE)
                .setObservedAt(T0).setCollectorEpoch(TopologyFixture.EPOCH).setSequence(1).build()));
        fixture.rawEvents.pipeInput(NODE, oldSnapshot);

        assertThat(fixture.podStatus.isEmpty()).isTrue();
        assertThat(fixture.meters.get("devhealth.processor.duplicates").tag("kind", "allocations").counter().count()).isEqualTo(1.0);
    }

    @Test
    void shouldSendAnUndecodableRecordToTheDeadLetterTopicAndGoOn() {
        byte[] garbage = "not avro at all".getBytes(StandardCharsets.UTF_8);
        fixture.rawEvents.pipeInput(new TestRecord<>(NODE, garbage, T0));
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));

        TestRecord<byte[], DeadLetter> letter = fixture.deadLetters.readRecord();
        assertThat(new String(letter.key(), StandardCharsets.UTF_8)).isEqualTo(NODE);
        DeadLetter value = letter.value();
        assertThat(value.getStage()).isEqualTo("processor");
        assertThat(value.getSourceTopic()).isEqualTo(fixture.topics.nodeEvents());
        assertThat(value.getSourcePartition()).isEqualTo(0);
        assertThat(value.getSourceOffset()).isEqualTo(0L);
        assertThat(bytes(value.getValue())).isEqualTo(garbage);
        assertThat(value.getReason()).startsWith("undecodable record");
        assertThat(value.getErrorClass()).isEqualTo(SerializationException.class.getName());
        assertThat(fixture.transitions.readValuesToList()).as("processing went on").hasSize(1);
        assertThat(deadLetterCount()).isEqualTo(1.0);
    }

    @Test
    void shouldSendAnInvalidRecordToTheDeadLetterTopicWithoutTouchingState() {
        NodeEvent noIdentity = new NodeEvent(DeviceHealthReport.newBuilder().setNode(NODE)
                .setDevice(DeviceRef.newBuilder().build()).setHealth(HealthStatus.UNHEALTHY).setObservedAt(T0)
                .setCollectorEpoch(TopologyFixture.EPOCH).setSequence(50).build());
        byte[] original = fixture.encode(noIdentity);
        fixture.rawEvents.pipeInput(new TestRecord<>(NODE, original, T0));
        // The invalid record did not advance the de-duplication watermark: a valid one with a lower sequence still counts.
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));

        DeadLetter value = fixture.deadLetters.readValue();
        assertThat(value.getReason()).startsWith("invalid record").contains("device identity");
        assertThat(value.getErrorClass()).isEqualTo(InvalidInputException.class.getName());
        assertThat(bytes(value.getValue())).isEqualTo(original);
        assertThat(fixture.transitions.readValuesToList()).hasSize(1);
        assertThat(fixture.meters.get("devhealth.processor.dead.letters").tag("kind", "invalid").tag("topic", fixture.topics.nodeEvents())
                .counter().count()).isEqualTo(1.0);
    }

    @Test
    void shouldSendARecordWithoutKeyToTheDeadLetterTopic() {
        fixture.pipe(null, report("gpu-0", HealthStatus.HEALTHY, T0).build(), T0);

        assertThat(fixture.deadLetters.readValue().getReason()).contains("key");
        assertThat(fixture.transitions.isEmpty()).isTrue();
    }

    private static byte[] bytes(java.nio.ByteBuffer buffer) {
        byte[] out = new byte[buffer.remaining()];
        buffer.duplicate().get(out);
        return out;
    }
}
