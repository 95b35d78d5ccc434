package io.devhealth.processor;

import static io.devhealth.processor.TopologyFixture.DRIVER;
import static io.devhealth.processor.TopologyFixture.NODE;
import static io.devhealth.processor.TopologyFixture.T0;
import static io.devhealth.processor.TopologyFixture.report;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cloudevents.CloudEvent;
import io.cloudevents.core.format.EventFormat;
import io.cloudevents.core.provider.EventFormatProvider;
import io.cloudevents.jackson.JsonFormat;
import io.devhealth.processor.internals.CloudEventsMirror;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/** The optional CloudEvents 1.0 JSON mirror of health-transitions, for SIEMs that take CloudEvents. */
class CloudEventsMirrorTest {

    private static final String DEVICE_KEY = NODE + "/" + DRIVER + "/" + NODE + "/gpu-0";
    private final ObjectMapper json = new ObjectMapper();

    private static TestOutputTopic<String, byte[]> mirror(TopologyFixture fixture) {
        return fixture.driver.createOutputTopic(fixture.topics.healthTransitionsCloudEvents(), Serdes.String().deserializer(),
                Serdes.ByteArray().deserializer());
    }

    @Test
    void shouldMirrorEveryTransitionAsAStructuredCloudEvent() throws Exception {
        try (TopologyFixture fixture = new TopologyFixture(o -> o.cloudEvents(true))) {
            fixture.allocate("train-0", "gpu-0");
            fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)).setCluster("prod-eu"));
            fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(2)).setCluster("prod-eu").setReason("XID-79")
                    .setMessage("XID 79"));

            List<HealthTransition> transitions = fixture.transitions.readValuesToList();
            List<TestRecord<String, byte[]>> events = mirror(fixture).readRecordsToList();
            assertThat(events).hasSize(2);
            TestRecord<String, byte[]> failure = events.get(1);
            assertThat(failure.key()).isEqualTo(DEVICE_KEY);
            assertThat(new String(failure.headers().lastHeader("content-type").value(), StandardCharsets.UTF_8))
                    .isEqualTo("application/cloudevents+json; charset=UTF-8");

            JsonNode event = json.readTree(failure.value());
            assertThat(event.get("specversion").asText()).isEqualTo("1.0");
            assertThat(event.get("id").asText()).isEqualTo(transitions.get(1).getId());
            assertThat(event.get("source").asText()).isEqualTo("/devhealth/prod-eu/" + NODE);
            assertThat(event.get("type").asText()).isEqualTo("io.devhealth.health.transition.v1");
            assertThat(event.get("subject").asText()).isEqualTo(DEVICE_KEY);
            assertThat(OffsetDateTime.parse(event.get("time").asText())).isEqualTo(T0.plusSeconds(2).atOffset(ZoneOffset.UTC));
            assertThat(event.get("datacontenttype").asText()).isEqualTo("application/json");
            assertThat(event.get("severity").asText()).isEqualTo("CRITICAL");
            JsonNode data = event.get("data");
            assertThat(data.get("from").asText()).isEqualTo("HEALTHY");
            assertThat(data.get("to").asText()).isEqualTo("UNHEALTHY");
            assertThat(data.get("reason").asText()).isEqualTo("XID-79");
            assertThat(data.get("device").get("device").asText()).isEqualTo("gpu-0");
            assertThat(data.get("affectedPods").get(0).asText()).isEqualTo("ml/train-0");
            assertThat(data.get("at").asText()).isEqualTo(T0.plusSeconds(2).toString());

            EventFormat format = EventFormatProvider.getInstance().resolveFormat(JsonFormat.CONTENT_TYPE);
            CloudEvent parsed = format.deserialize(failure.value());
            assertThat(parsed.getId()).isEqualTo(transitions.get(1).getId());
            assertThat(parsed.getExtension("severity")).isEqualTo("CRITICAL");
        }
    }

    @Test
    void shouldNameTheDefaultClusterInTheSourceAndMirrorNothingWhenOff() {
        assertThat(CloudEventsMirror.toEvent("k", HealthTransition.newBuilder().setId("t").setNode("node a")
                .setDevice(TopologyFixture.device("gpu-0")).setFrom(HealthStatus.UNKNOWN).setTo(HealthStatus.HEALTHY)
                .setSource(io.devhealth.schema.avro.SourceKind.DRA).setAt(T0)
                .setSeverity(io.devhealth.schema.avro.Severity.INFO).build()).getSource().toString())
                .isEqualTo("/devhealth/default/node%20a");
        try (TopologyFixture fixture = new TopologyFixture(o -> o)) {
            fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
            assertThat(fixture.transitions.readValuesToList()).hasSize(1);
            assertThat(mirror(fixture).isEmpty()).as("off by default").isTrue();
        }
    }

    @Test
    void shouldMirrorEachPodsVerdictOnceOnTheSameFeed() throws Exception {
        try (TopologyFixture fixture = new TopologyFixture(o -> o.cloudEvents(true))) {
            io.devhealth.schema.avro.TerminatedPod died = PodVerdictsTest.verdict("train-0", "uid-0", NODE,
                    io.devhealth.schema.avro.Verdict.DEVICE_FAILURE, T0.plusSeconds(90), "NVIDIA H100 80GB HBM3");
            fixture.verdicts.pipeInput("ml/train-0", died, died.getRecordedAt());
            // The sink publishes at least once: a repeated delivery is no second event.
            fixture.verdicts.pipeInput("ml/train-0", died, died.getRecordedAt());

            List<TestRecord<String, byte[]>> events = mirror(fixture).readRecordsToList();
            assertThat(events).hasSize(1);
            assertThat(events.get(0).key()).isEqualTo("ml/train-0");
            JsonNode event = json.readTree(events.get(0).value());
            assertThat(event.get("type").asText()).isEqualTo(CloudEventsMirror.VERDICT_TYPE);
            assertThat(event.get("id").asText()).isEqualTo("uid-0");
            assertThat(event.get("source").asText()).isEqualTo("/devhealth/default/" + NODE);
            assertThat(event.get("subject").asText()).isEqualTo("ml/train-0");
            assertThat(OffsetDateTime.parse(event.get("time").asText())).isEqualTo(T0.plusSeconds(90).atOffset(ZoneOffset.UTC));
            assertThat(event.get("severity").asText()).isEqualTo("CRITICAL");
            JsonNode data = event.get("data");
            assertThat(data.get("verdict").asText()).isEqualTo("DeviceFailure");
            assertThat(data.get("uid").asText()).isEqualTo("uid-0");
            JsonNode device = data.get("containers").get(0).get("devices").get(0);
            assertThat(device.get("health").asText()).isEqualTo("UNHEALTHY");
            assertThat(device.get("product").asText()).isEqualTo("NVIDIA H100 80GB HBM3");
            assertThat(device.get("device").get("device").asText()).isEqualTo("gpu-0");
        }
    }
}
