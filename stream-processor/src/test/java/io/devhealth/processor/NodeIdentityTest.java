package io.devhealth.processor;

import static io.devhealth.processor.TopologyFixture.EPOCH;
import static io.devhealth.processor.TopologyFixture.NODE;
import static io.devhealth.processor.TopologyFixture.T0;
import static io.devhealth.processor.TopologyFixture.report;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.processor.internals.input.NodeIdentityCheck;
import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeDevices;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.avro.SourceStatus;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/** A collector may only publish for its own node: a record keyed by one node that names another is a dead letter. */
class NodeIdentityTest {

    private static double rejected(TopologyFixture fixture, String input, String check) {
        var counter = fixture.meters.find("devhealth.processor.node.identity.rejected").tag("input", input).tag("check", check).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void shouldDeadLetterAReportWhoseValueNamesAnotherNodeThanItsKey() {
        try (TopologyFixture fixture = new TopologyFixture(o -> o)) {
            DeviceHealthReport forged = report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(1)).setNode("node-b")
                    .setCollectorEpoch(EPOCH).setSequence(1).build();
            fixture.sendRaw(forged, T0.plusSeconds(1));
            fixture.send(report("gpu-1", HealthStatus.HEALTHY, T0.plusSeconds(2)));

            List<DeadLetter> letters = fixture.deadLetters.readValuesToList();
            assertThat(letters).singleElement().satisfies(letter -> {
                assertThat(letter.getSourceTopic()).isEqualTo(fixture.topics.nodeEvents());
                assertThat(letter.getReason()).contains("node-b").contains(NODE).contains("only publish for its own node");
                assertThat(letter.getValue()).as("original bytes kept").isNotNull();
            });
            assertThat(rejected(fixture, "node-events", "value-node")).isEqualTo(1.0);
            assertThat(fixture.transitions.readValuesToList()).as("the forged report changed nothing; the next one is applied")
                    .singleElement().satisfies(t -> assertThat(t.getDevice().getDevice()).isEqualTo("gpu-1"));
        }
    }

    @Test
    void shouldDeadLetterHeartbeatsAllocationsAndInventoriesOfAnotherNode() {
        try (TopologyFixture fixture = new TopologyFixture(o -> o)) {
            fixture.pipe(NODE, TopologyFixture.heartbeatOf(T0, SourceStatus.DOWN).setNode("node-b").setCollectorEpoch(EPOCH)
                    .setSequence(1).build(), T0);
            fixture.pipe(NODE, NodeAllocations.newBuilder().setNode("node-b").setObservedAt(T0).build(), T0);
            fixture.pipe(NODE, NodeDevices.newBuilder().setNode("").setObservedAt(T0).build(), T0);

            assertThat(fixture.deadLetters.readValuesToList()).extracting(DeadLetter::getReason)
                    .satisfiesExactly(r -> assertThat(r).contains("'node-b'"), r -> assertThat(r).contains("'node-b'"),
                            r -> assertThat(r).contains("for node ''"));
            assertThat(rejected(fixture, "node-events", "value-node")).isEqualTo(3.0);
            assertThat(fixture.podStatus.isEmpty()).isTrue();
            assertThat(fixture.driver.getKeyValueStore(DeviceHealthTopology.NODE_INVENTORY_STORE).get(NODE)).isNull();
        }
    }

    @Test
    void shouldRequireTheNodeHeaderOnlyWhenPrincipalsAreEnforced() {
        try (TopologyFixture fixture = new TopologyFixture(o -> o.enforcePrincipals(true))) {
            DeviceHealthReport.Builder report = report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)).setCollectorEpoch(EPOCH);
            fixture.events.pipeInput(new TestRecord<>(NODE, new NodeEvent(report.setSequence(1).build()),
                    new RecordHeaders(), T0.plusSeconds(1)));
            fixture.events.pipeInput(new TestRecord<>(NODE, new NodeEvent(report.setSequence(2).build()),
                    new RecordHeaders().add(new RecordHeader(NodeIdentityCheck.NODE_HEADER, "node-b".getBytes(StandardCharsets.UTF_8))),
                    T0.plusSeconds(1)));
            fixture.events.pipeInput(new TestRecord<>(NODE, new NodeEvent(report.setSequence(3).build()),
                    new RecordHeaders().add(new RecordHeader(NodeIdentityCheck.NODE_HEADER, NODE.getBytes(StandardCharsets.UTF_8))),
                    T0.plusSeconds(1)));

            assertThat(fixture.deadLetters.readValuesToList()).extracting(DeadLetter::getReason)
                    .satisfiesExactly(r -> assertThat(r).contains("without the devhealth.node header"),
                            r -> assertThat(r).contains("devhealth.node='node-b'"));
            assertThat(rejected(fixture, "node-events", "header")).isEqualTo(2.0);
            assertThat(fixture.transitions.readValuesToList()).as("only the record with the right header applied").hasSize(1);
        }
        try (TopologyFixture fixture = new TopologyFixture(o -> o)) {
            fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
            assertThat(fixture.deadLetters.isEmpty()).as("off by default: no header needed").isTrue();
            assertThat(fixture.transitions.readValuesToList()).hasSize(1);
        }
    }
}
