package io.devhealth.processor;

import static io.devhealth.processor.TopologyFixture.DRIVER;
import static io.devhealth.processor.TopologyFixture.EPOCH;
import static io.devhealth.processor.TopologyFixture.NODE;
import static io.devhealth.processor.TopologyFixture.T0;
import static io.devhealth.processor.TopologyFixture.report;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.DeviceStatus;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.Severity;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.serde.SchemaRegistries;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TopologyDescription;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class DeviceHealthTopologyTest {

    private final TopologyFixture fixture = new TopologyFixture();

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    private static List<DeviceStatus> devices(PodDeviceStatus status) {
        return status.getContainers().get(0).getClaims().get(0).getDevices();
    }

    private static org.assertj.core.groups.Tuple fromTo(HealthStatus from, HealthStatus to) {
        return tuple(from, to);
    }

    @Test
    void shouldNameEveryTopicItReadsAsAnInput() {
        Topics topics = Topics.withDefaultPrefix();
        TopologyDescription description = DeviceHealthTopology.build(topics,
                ProcessorSerdes.over(SchemaRegistries.inMemory("inputs-" + UUID.randomUUID()))).describe();
        Set<String> read = new HashSet<>();
        for (TopologyDescription.Subtopology subtopology : description.subtopologies()) {
            for (TopologyDescription.Node node : subtopology.nodes()) {
                if (node instanceof TopologyDescription.Source source) {
                    read.addAll(source.topicSet());
                }
            }
        }
        // Repartition topics are the topology's own, written by it.
        read.removeIf(topic -> topic.endsWith("-repartition"));

        assertThat(DeviceHealthTopology.inputTopics(topics)).containsExactlyInAnyOrderElementsOf(read);
    }

    /** What lets the processor run with task idling off (StreamProcessorApp): no task has two partitions to order. */
    @Test
    void shouldReadOneTopicInEverySubtopology() {
        TopologyDescription description = DeviceHealthTopology.build(Topics.withDefaultPrefix(),
                ProcessorSerdes.over(SchemaRegistries.inMemory("sources-" + UUID.randomUUID()))).describe();

        for (TopologyDescription.Subtopology subtopology : description.subtopologies()) {
            Set<String> read = new HashSet<>();
            subtopology.nodes().stream().filter(TopologyDescription.Source.class::isInstance)
                    .forEach(source -> read.addAll(((TopologyDescription.Source) source).topicSet()));
            assertThat(read).as("topics of sub-topology %d", subtopology.id()).hasSize(1);
        }
        ProcessorConfig config = new ProcessorConfig(Map.of(ProcessorConfig.BOOTSTRAP_SERVERS, "unused:9092",
                ProcessorConfig.SCHEMA_REGISTRY_URL, "mem://unused"));
        assertThat(StreamProcessorApp.streamsProperties(config))
                .containsEntry(StreamsConfig.MAX_TASK_IDLE_MS_CONFIG, StreamsConfig.MAX_TASK_IDLE_MS_DISABLED);
    }

    @Test
    void shouldEmitPodStatusWithUnknownDevicesWhenAllocationArrivesBeforeAnyReport() {
        fixture.allocate("train-0", "gpu-0");

        PodDeviceStatus status = fixture.podStatus.readValue();
        assertThat(status.getPod().getName()).isEqualTo("train-0");
        assertThat(status.getSummary()).isEqualTo(HealthStatus.UNKNOWN);
        assertThat(devices(status)).singleElement().satisfies(d -> {
            assertThat(d.getHealth()).isEqualTo(HealthStatus.UNKNOWN);
            assertThat(d.getResourceId()).isEqualTo(DRIVER + "/gpu=gpu-0");
        });
    }

    @Test
    void shouldJoinUnhealthyReportToThePodUsingTheDevice() {
        fixture.allocate("train-0", "gpu-0");
        fixture.allocate("train-0", "gpu-0");
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(2)).setMessage("XID 79").setReason("XID-79"));

        List<PodDeviceStatus> statuses = fixture.podStatus.readValuesToList();
        assertThat(statuses).as("unchanged allocation re-sent: no new status").hasSize(3);
        PodDeviceStatus last = statuses.get(2);
        assertThat(last.getVersion()).isEqualTo(3);
        assertThat(last.getSummary()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(devices(last)).singleElement().satisfies(d -> {
            assertThat(d.getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
            assertThat(d.getMessage()).as("the driver's own words reach the pod").isEqualTo("XID 79");
            assertThat(d.getReason()).isEqualTo("XID-79");
            assertThat(d.getSince()).isEqualTo(T0.plusSeconds(2));
        });
    }

    /**
     * Downstream consumers (the sink, CloudEvents readers) de-duplicate transitions by id: the same input
     * replayed (a restore, a reprocessing) must give each transition the id it had the first time.
     */
    @Test
    void shouldGiveTheSameTransitionsTheSameIdsWhenTheSameInputIsReplayed() {
        List<HealthTransition> first;
        List<HealthTransition> second;
        try (TopologyFixture one = new TopologyFixture(); TopologyFixture other = new TopologyFixture()) {
            first = transitionsOf(one);
            second = transitionsOf(other);
        }

        assertThat(first).extracting(t -> t.getDevice().getDevice() + " " + t.getFrom() + "->" + t.getTo())
                .as("every kind of id: a report's, a UUID's moved onto its DRA device, silence's").containsExactly(
                        " UNKNOWN->UNHEALTHY", "gpu-0 UNKNOWN->UNHEALTHY", "gpu-1 UNKNOWN->HEALTHY",
                        "gpu-0 UNHEALTHY->UNKNOWN", "gpu-1 HEALTHY->UNKNOWN");
        assertThat(first).extracting(HealthTransition::getId).as("distinct, or de-duplication would drop transitions")
                .doesNotHaveDuplicates();
        assertThat(second).extracting(HealthTransition::getId).isEqualTo(first.stream().map(HealthTransition::getId).toList());
    }

    /** Feeds {@code fixture} the same records and wall-clock time every time; returns the transitions it emitted. */
    private static List<HealthTransition> transitionsOf(TopologyFixture fixture) {
        fixture.allocate("train-0", "gpu-0");
        fixture.send(TopologyFixture.nvml(TopologyFixture.uuid("gpu-0"), HealthStatus.UNHEALTHY, T0.plusSeconds(1)).setReason("XID-79"));
        fixture.inventory("gpu-0", "gpu-1");
        fixture.send(report("gpu-1", HealthStatus.HEALTHY, T0.plusSeconds(2)));
        fixture.runFor(Duration.ofSeconds(40));
        return fixture.transitions.readValuesToList();
    }

    @Test
    void shouldEmitExactlyOneTransitionPerChangeAndNoneForKeepAlives() {
        fixture.allocate("train-0", "gpu-0");
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(16)).setKind(ReportKind.KEEPALIVE));
        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(20)).setMessage("XID 79").setReason("XID-79"));
        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(35)).setMessage("XID 79").setReason("XID-79")
                .setKind(ReportKind.KEEPALIVE));

        List<HealthTransition> emitted = fixture.transitions.readValuesToList();
        assertThat(emitted).extracting(HealthTransition::getFrom, HealthTransition::getTo).containsExactly(
                fromTo(HealthStatus.UNKNOWN, HealthStatus.HEALTHY),
                fromTo(HealthStatus.HEALTHY, HealthStatus.UNHEALTHY));
        HealthTransition failure = emitted.get(1);
        assertThat(failure.getSeverity()).isEqualTo(Severity.CRITICAL);
        assertThat(failure.getAffectedPods()).extracting(p -> p.getNamespace() + "/" + p.getName()).containsExactly("ml/train-0");
        assertThat(failure.getId()).isNotEqualTo(emitted.get(0).getId());
        assertThat(failure.getAt()).isEqualTo(T0.plusSeconds(20));
        assertThat(failure.getSource()).isEqualTo(SourceKind.DRA);
        assertThat(failure.getReason()).isEqualTo("XID-79");
        assertThat(failure.getMessage()).as("names source and reason").contains(DRIVER).contains("XID-79").contains("XID 79");
    }

    @Test
    void shouldRecoverFromUnhealthyToHealthy() {
        fixture.allocate("train-0", "gpu-0");
        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(1)).setMessage("XID 79"));
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(20)));

        List<PodDeviceStatus> statuses = fixture.podStatus.readValuesToList();
        assertThat(statuses).extracting(PodDeviceStatus::getSummary)
                .containsExactly(HealthStatus.UNKNOWN, HealthStatus.UNHEALTHY, HealthStatus.HEALTHY);
        assertThat(fixture.transitions.readValuesToList()).extracting(HealthTransition::getTo)
                .containsExactly(HealthStatus.UNHEALTHY, HealthStatus.HEALTHY);
    }

    /**
     * A driver that reports health only as device taints (NVIDIA's): the TAINT source of the same
     * driver name is one more source of the merge, its Unhealthy wins over the driver's own fresh
     * Healthy, and its recovery (the taint removed) turns the device Healthy again.
     */
    @Test
    void shouldMergeTheTaintSourceOfADriverLikeAnyOtherSource() {
        fixture.allocate("train-0", "gpu-0");
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(2)).setSource(SourceKind.TAINT).setTimeoutSeconds(30L)
                .setMessage("XID 79 reported by the driver (gpu.nvidia.com/xid, NoSchedule)"));
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(3)).setKind(ReportKind.KEEPALIVE));

        List<HealthTransition> transitions = fixture.transitions.readValuesToList();
        assertThat(transitions).extracting(HealthTransition::getTo).containsExactly(HealthStatus.HEALTHY, HealthStatus.UNHEALTHY);
        assertThat(transitions.get(1).getMessage()).contains("XID 79 reported by the driver");

        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(10)).setSource(SourceKind.TAINT).setTimeoutSeconds(30L));
        assertThat(fixture.transitions.readValuesToList()).extracting(HealthTransition::getTo).containsExactly(HealthStatus.HEALTHY);
        assertThat(fixture.podStatus.readValuesToList()).last().extracting(PodDeviceStatus::getSummary).isEqualTo(HealthStatus.HEALTHY);
    }

    @Test
    void shouldTurnAbsentDeviceUnknown() {
        fixture.allocate("train-0", "gpu-0");
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        fixture.send(report("gpu-0", HealthStatus.UNKNOWN, T0.plusSeconds(2)).setKind(ReportKind.ABSENT)
                .setMessage("device missing from driver snapshot"));

        assertThat(fixture.transitions.readValuesToList()).extracting(HealthTransition::getTo)
                .containsExactly(HealthStatus.HEALTHY, HealthStatus.UNKNOWN);
    }

    @Test
    void shouldNotTouchPodsUsingOtherDevices() {
        fixture.allocate("train-0", "gpu-0");
        fixture.podStatus.readValuesToList();
        fixture.send(report("gpu-1", HealthStatus.UNHEALTHY, T0.plusSeconds(1)).setMessage("XID 48"));

        assertThat(fixture.podStatus.isEmpty()).isTrue();
        assertThat(fixture.transitions.readValue().getAffectedPods()).isEmpty();
    }

    @Test
    void shouldLetAFreshUnhealthyFromAnySourceWinAndRecoverWhenItGoesStale() {
        fixture.allocate("train-0", "gpu-0");
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)).setKind(ReportKind.CHANGE));
        // NVML says the same GPU is broken, identified by the DRA device it backs.
        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(2)).setSource(SourceKind.NVML).setSourceName("nvml")
                .setMessage("XID 48: double-bit ECC error").setReason("XID-48").setTimeoutSeconds(10L));
        // The driver keeps saying healthy; the fresh Unhealthy still wins.
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(8)).setKind(ReportKind.KEEPALIVE));
        // NVML falls silent: after its 10 s timeout only the driver's fresh Healthy is left.
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(15)).setKind(ReportKind.KEEPALIVE));

        List<HealthTransition> emitted = fixture.transitions.readValuesToList();
        assertThat(emitted).extracting(HealthTransition::getFrom, HealthTransition::getTo, HealthTransition::getSource).containsExactly(
                tuple(HealthStatus.UNKNOWN, HealthStatus.HEALTHY, SourceKind.DRA),
                tuple(HealthStatus.HEALTHY, HealthStatus.UNHEALTHY, SourceKind.NVML),
                tuple(HealthStatus.UNHEALTHY, HealthStatus.HEALTHY, SourceKind.DRA));
        assertThat(emitted.get(1).getMessage()).contains("nvml (NVML)").contains("XID-48");
        assertThat(emitted.get(2).getAt()).as("recovered when the NVML report went stale").isEqualTo(T0.plusSeconds(12));
        PodDeviceStatus last = fixture.podStatus.readValuesToList().stream().reduce((a, b) -> b).orElseThrow();
        assertThat(last.getSummary()).isEqualTo(HealthStatus.HEALTHY);
    }

    @Test
    void shouldKeepDevicesOfDifferentNodesApart() {
        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(1)));
        fixture.pipe("node-b", report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)).setNode("node-b")
                        .setDevice(DeviceRef.newBuilder().setDriver(DRIVER).setPool(NODE).setDevice("gpu-0").build())
                        .setCollectorEpoch(EPOCH).setSequence(1).build(),
                T0.plusSeconds(1));

        assertThat(fixture.transitions.readKeyValuesToList()).extracting(kv -> kv.key, kv -> kv.value.getTo()).containsExactly(
                tuple(NODE + "/" + DRIVER + "/" + NODE + "/gpu-0", HealthStatus.UNHEALTHY),
                tuple("node-b/" + DRIVER + "/" + NODE + "/gpu-0", HealthStatus.HEALTHY));
    }
}
