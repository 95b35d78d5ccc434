package io.devhealth.processor;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.ClaimAllocation;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.ContainerAllocation;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.DeviceReportEnvelope;
import io.devhealth.schema.avro.DeviceStatus;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.Severity;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.serde.SchemaRegistries;
import java.nio.file.Files;
import java.time.Instant;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class DeviceHealthTopologyTest {

    private static final String NODE = "node-a";
    private static final String DRIVER = "gpu.example.com";
    private static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");

    private final Topics topics = Topics.withDefaultPrefix();
    private TopologyTestDriver driver;
    private TestInputTopic<String, DeviceReportEnvelope> reports;
    private TestInputTopic<String, NodeAllocations> allocations;
    private TestOutputTopic<String, PodDeviceStatus> podStatus;
    private TestOutputTopic<String, HealthTransition> transitions;

    @BeforeEach
    void setUp() throws Exception {
        ProcessorSerdes serdes = ProcessorSerdes.over(SchemaRegistries.inMemory("topology-test-" + UUID.randomUUID()));
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "topology-test");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("dh-tt").toString());
        driver = new TopologyTestDriver(DeviceHealthTopology.build(topics, serdes), props);
        reports = driver.createInputTopic(topics.deviceReports(), Serdes.String().serializer(), serdes.deviceReports().serializer());
        allocations = driver.createInputTopic(topics.nodeAllocations(), Serdes.String().serializer(), serdes.nodeAllocations().serializer());
        podStatus = driver.createOutputTopic(topics.podDeviceStatus(), Serdes.String().deserializer(), serdes.podDeviceStatus().deserializer());
        transitions = driver.createOutputTopic(topics.healthTransitions(), Serdes.String().deserializer(),
                serdes.healthTransitions().deserializer());
    }

    @AfterEach
    void tearDown() {
        driver.close();
    }

    private static NodeAllocations podUsing(String pod, String... devices) {
        List<ClaimDevice> claimDevices = java.util.Arrays.stream(devices)
                .map(d -> ClaimDevice.newBuilder().setDriver(DRIVER).setPool(NODE).setDevice(d)
                        .setCdiIds(List.of(DRIVER + "/gpu=" + d)).build())
                .toList();
        return NodeAllocations.newBuilder().setNode(NODE).setObservedAt(T0)
                .setPods(List.of(new PodAllocation("ml", pod, List.of(ContainerAllocation.newBuilder().setName("main")
                        .setClaims(List.of(new ClaimAllocation(pod + "-gpu", "ml", claimDevices))).build()))))
                .build();
    }

    private static DeviceReportEnvelope report(String device, HealthStatus health, String message, ReportKind kind) {
        return new DeviceReportEnvelope(DeviceHealthReport.newBuilder()
                .setNode(NODE).setSource(SourceKind.DRA).setSourceName(DRIVER)
                .setDevice(DeviceRef.newBuilder().setDriver(DRIVER).setPool(NODE).setDevice(device).build())
                .setHealth(health).setKind(kind).setMessage(message).setObservedAt(T0)
                .build());
    }

    private static List<DeviceStatus> devices(PodDeviceStatus status) {
        return status.getContainers().get(0).getClaims().get(0).getDevices();
    }

    @Test
    void shouldEmitPodStatusWithUnknownDevicesWhenAllocationArrivesBeforeAnyReport() {
        allocations.pipeInput(NODE, podUsing("train-0", "gpu-0"), T0);

        PodDeviceStatus status = podStatus.readValue();
        assertThat(status.getPod().getName()).isEqualTo("train-0");
        assertThat(status.getSummary()).isEqualTo(HealthStatus.UNKNOWN);
        assertThat(devices(status)).singleElement().satisfies(d -> {
            assertThat(d.getHealth()).isEqualTo(HealthStatus.UNKNOWN);
            assertThat(d.getResourceId()).isEqualTo(DRIVER + "/gpu=gpu-0");
        });
    }

    @Test
    void shouldJoinUnhealthyReportToThePodUsingTheDevice() {
        allocations.pipeInput(NODE, podUsing("train-0", "gpu-0"), T0);
        allocations.pipeInput(NODE, podUsing("train-0", "gpu-0"), T0);
        reports.pipeInput(NODE, report("gpu-0", HealthStatus.HEALTHY, null, ReportKind.CHANGE), T0.plusSeconds(1));
        reports.pipeInput(NODE, report("gpu-0", HealthStatus.UNHEALTHY, "XID 79", ReportKind.CHANGE), T0.plusSeconds(2));

        List<PodDeviceStatus> statuses = podStatus.readValuesToList();
        assertThat(statuses).as("unchanged allocation re-sent: no new status").hasSize(3);
        PodDeviceStatus last = statuses.get(2);
        assertThat(last.getVersion()).isEqualTo(3);
        assertThat(last.getSummary()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(devices(last)).singleElement().satisfies(d -> {
            assertThat(d.getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
            assertThat(d.getMessage()).isEqualTo("XID 79");
            assertThat(d.getSince()).isEqualTo(T0.plusSeconds(2));
        });
    }

    @Test
    void shouldEmitExactlyOneTransitionPerChangeAndNoneForKeepAlives() {
        allocations.pipeInput(NODE, podUsing("train-0", "gpu-0"), T0);
        reports.pipeInput(NODE, report("gpu-0", HealthStatus.HEALTHY, null, ReportKind.CHANGE), T0.plusSeconds(1));
        reports.pipeInput(NODE, report("gpu-0", HealthStatus.HEALTHY, null, ReportKind.KEEPALIVE), T0.plusSeconds(16));
        reports.pipeInput(NODE, report("gpu-0", HealthStatus.UNHEALTHY, "XID 79", ReportKind.CHANGE), T0.plusSeconds(20));
        reports.pipeInput(NODE, report("gpu-0", HealthStatus.UNHEALTHY, "XID 79", ReportKind.KEEPALIVE), T0.plusSeconds(35));

        List<HealthTransition> emitted = transitions.readValuesToList();
        assertThat(emitted).extracting(HealthTransition::getFrom, HealthTransition::getTo).containsExactly(
                org.assertj.core.groups.Tuple.tuple(HealthStatus.UNKNOWN, HealthStatus.HEALTHY),
                org.assertj.core.groups.Tuple.tuple(HealthStatus.HEALTHY, HealthStatus.UNHEALTHY));
        HealthTransition failure = emitted.get(1);
        assertThat(failure.getSeverity()).isEqualTo(Severity.CRITICAL);
        assertThat(failure.getAffectedPods()).extracting(p -> p.getNamespace() + "/" + p.getName()).containsExactly("ml/train-0");
        assertThat(failure.getId()).isNotEqualTo(emitted.get(0).getId());
    }

    @Test
    void shouldRecoverFromUnhealthyToHealthy() {
        allocations.pipeInput(NODE, podUsing("train-0", "gpu-0"), T0);
        reports.pipeInput(NODE, report("gpu-0", HealthStatus.UNHEALTHY, "XID 79", ReportKind.CHANGE), T0.plusSeconds(1));
        reports.pipeInput(NODE, report("gpu-0", HealthStatus.HEALTHY, null, ReportKind.CHANGE), T0.plusSeconds(60));

        List<PodDeviceStatus> statuses = podStatus.readValuesToList();
        assertThat(statuses).extracting(PodDeviceStatus::getSummary)
                .containsExactly(HealthStatus.UNKNOWN, HealthStatus.UNHEALTHY, HealthStatus.HEALTHY);
        assertThat(transitions.readValuesToList()).extracting(HealthTransition::getTo)
                .containsExactly(HealthStatus.UNHEALTHY, HealthStatus.HEALTHY);
    }

    @Test
    void shouldTurnAbsentDeviceUnknown() {
        allocations.pipeInput(NODE, podUsing("train-0", "gpu-0"), T0);
        reports.pipeInput(NODE, report("gpu-0", HealthStatus.HEALTHY, null, ReportKind.CHANGE), T0.plusSeconds(1));
        reports.pipeInput(NODE, report("gpu-0", HealthStatus.UNKNOWN, "device missing from driver snapshot", ReportKind.ABSENT),
                T0.plusSeconds(2));

        assertThat(transitions.readValuesToList()).extracting(HealthTransition::getTo)
                .containsExactly(HealthStatus.HEALTHY, HealthStatus.UNKNOWN);
    }

    @Test
    void shouldNotTouchPodsUsingOtherDevices() {
        allocations.pipeInput(NODE, podUsing("train-0", "gpu-0"), T0);
        podStatus.readValuesToList();
        reports.pipeInput(NODE, report("gpu-1", HealthStatus.UNHEALTHY, "XID 48", ReportKind.CHANGE), T0.plusSeconds(1));

        assertThat(podStatus.isEmpty()).isTrue();
        assertThat(transitions.readValue().getAffectedPods()).isEmpty();
    }
}
