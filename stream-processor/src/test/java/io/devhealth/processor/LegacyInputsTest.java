package io.devhealth.processor;

import static io.devhealth.processor.TopologyFixture.EPOCH;
import static io.devhealth.processor.TopologyFixture.NODE;
import static io.devhealth.processor.TopologyFixture.T0;
import static io.devhealth.processor.TopologyFixture.allocation;
import static io.devhealth.processor.TopologyFixture.inventoryOf;
import static io.devhealth.processor.TopologyFixture.nvml;
import static io.devhealth.processor.TopologyFixture.report;
import static io.devhealth.processor.TopologyFixture.uuid;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceReportEnvelope;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeDevices;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.serde.SchemaRegistries;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.streams.TopologyDescription;
import org.junit.jupiter.api.Test;

/**
 * While collectors move from the three-topic layout to node-events, processors read both
 * ({@code inputs.legacy.enabled}, docs/proposals/one-node-stream.md): a node's facts from either
 * layout meet in one state, and a record the collector re-sends on node-events after it was
 * delivered on an old topic (its spool replays what was not acknowledged) is a duplicate.
 */
class LegacyInputsTest {

    private static Set<String> sourceTopics(TopologyOptions options) {
        Topics topics = Topics.withDefaultPrefix();
        TopologyDescription description = DeviceHealthTopology.build(topics,
                ProcessorSerdes.over(SchemaRegistries.inMemory("legacy-inputs-test")), options).describe();
        Set<String> sources = new HashSet<>();
        for (TopologyDescription.Subtopology subtopology : description.subtopologies()) {
            for (TopologyDescription.Node node : subtopology.nodes()) {
                if (node instanceof TopologyDescription.Source source && source.topicSet() != null) {
                    sources.addAll(source.topicSet());
                }
            }
        }
        return sources;
    }

    @Test
    void shouldReadOnlyNodeEventsUnlessTheEarlierLayoutIsEnabled() {
        Topics topics = Topics.withDefaultPrefix();

        assertThat(sourceTopics(TopologyOptions.defaults())).contains(topics.nodeEvents())
                .doesNotContainAnyElementsOf(topics.legacyCollectorTopics());
        assertThat(sourceTopics(TopologyOptions.defaults().withLegacyInputs(true)))
                .containsAll(topics.collectorTopics());
    }

    @Test
    void shouldTakeTheSettingFromTheConfigurationOffByDefault() {
        Map<String, Object> values = new HashMap<>(Map.of(ProcessorConfig.BOOTSTRAP_SERVERS, "k:9092",
                ProcessorConfig.SCHEMA_REGISTRY_URL, "mem://p"));
        assertThat(new ProcessorConfig(values).topologyOptions(new SimpleMeterRegistry()).legacyInputs()).isFalse();

        values.put(ProcessorConfig.INPUTS_LEGACY_ENABLED, "true");
        assertThat(new ProcessorConfig(values).topologyOptions(new SimpleMeterRegistry()).legacyInputs()).isTrue();
    }

    @Test
    void shouldJoinAReportOnNodeEventsWithAllocationsOnTheEarlierLayout() {
        try (TopologyFixture fixture = new TopologyFixture(o -> o.withLegacyInputs(true))) {
            fixture.legacyAllocations.pipeInput(NODE, allocation("train-0", T0, EPOCH, 1, "gpu-0"), T0);
            fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(1)).setReason("XID-79"));

            assertThat(fixture.podStatus.readValuesToList()).last().extracting(PodDeviceStatus::getSummary)
                    .isEqualTo(HealthStatus.UNHEALTHY);
        }
    }

    @Test
    void shouldApplyEveryKindOfRecordFromTheEarlierLayout() {
        try (TopologyFixture fixture = new TopologyFixture(o -> o.withLegacyInputs(true))) {
            Instant at = T0.plusSeconds(1);
            fixture.legacyInventory.pipeInput(NODE, inventoryOf("gpu-0").setCollectorEpoch(EPOCH).setSequence(1).build(), T0);
            fixture.legacyAllocations.pipeInput(NODE, allocation("train-0", T0, EPOCH, 2, "gpu-0"), T0);
            DeviceHealthReport byUuid = nvml(uuid("gpu-0"), HealthStatus.UNHEALTHY, at).setReason("XID-79")
                    .setCollectorEpoch(EPOCH).setSequence(3).build();
            fixture.legacyReports.pipeInput(NODE, new DeviceReportEnvelope(byUuid), at);

            assertThat(fixture.transitions.readValuesToList()).singleElement().satisfies(t -> {
                assertThat(t.getDevice().getDevice()).as("the UUID mapped by the legacy inventory").isEqualTo("gpu-0");
                assertThat(t.getTo()).isEqualTo(HealthStatus.UNHEALTHY);
                assertThat(t.getAffectedPods()).extracting(p -> p.getName()).containsExactly("train-0");
            });
        }
    }

    @Test
    void shouldDropARecordResentOnNodeEventsAfterItWasDeliveredOnTheEarlierLayout() {
        try (TopologyFixture fixture = new TopologyFixture(o -> o.withLegacyInputs(true))) {
            DeviceHealthReport unhealthy = report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(1))
                    .setCollectorEpoch(EPOCH).setSequence(7).build();
            NodeAllocations snapshot = allocation("train-0", T0, EPOCH, 6, "gpu-0");
            fixture.legacyAllocations.pipeInput(NODE, snapshot, T0);
            fixture.legacyReports.pipeInput(NODE, new DeviceReportEnvelope(unhealthy), T0.plusSeconds(1));
            fixture.transitions.readValuesToList();
            fixture.podStatus.readValuesToList();

            // The upgraded collector's spool had not seen these acknowledged: it sends them again, on node-events.
            fixture.pipe(NODE, snapshot, T0.plusSeconds(2));
            fixture.pipe(NODE, unhealthy, T0.plusSeconds(2));

            assertThat(fixture.transitions.isEmpty()).isTrue();
            assertThat(fixture.podStatus.isEmpty()).isTrue();
            assertThat(fixture.meters.get("devhealth.processor.duplicates").tag("kind", "reports").counter().count()).isEqualTo(1.0);
            assertThat(fixture.meters.get("devhealth.processor.duplicates").tag("kind", "allocations").counter().count()).isEqualTo(1.0);
        }
    }

    @Test
    void shouldDeadLetterRecordsOfAnotherNodeOnTheEarlierLayoutCountedByTopic() {
        try (TopologyFixture fixture = new TopologyFixture(o -> o.withLegacyInputs(true))) {
            fixture.legacyAllocations.pipeInput(NODE, NodeAllocations.newBuilder().setNode("node-b").setObservedAt(T0).build(), T0);
            fixture.legacyInventory.pipeInput(NODE, NodeDevices.newBuilder().setNode("").setObservedAt(T0).build(), T0);
            fixture.legacyReports.pipeInput(NODE, new DeviceReportEnvelope(report("gpu-0", HealthStatus.HEALTHY, T0)
                    .setNode("node-b").setCollectorEpoch(EPOCH).setSequence(1).build()), T0);

            assertThat(fixture.deadLetters.readValuesToList()).extracting(DeadLetter::getSourceTopic).containsExactly(
                    fixture.topics.nodeAllocations(), fixture.topics.deviceInventory(), fixture.topics.deviceReports());
            for (String input : new String[] {"node-allocations", "device-inventory", "device-reports"}) {
                assertThat(fixture.meters.get("devhealth.processor.node.identity.rejected").tag("input", input)
                        .tag("check", "value-node").counter().count()).as(input).isEqualTo(1.0);
            }
            assertThat(fixture.transitions.readValuesToList()).extracting(HealthTransition::getTo).isEmpty();
        }
    }
}
