package io.devhealth.query.state;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.devhealth.processor.state.DeviceNow;
import io.devhealth.schema.avro.ClaimDeviceStatus;
import io.devhealth.schema.avro.ContainerDeviceStatus;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.DeviceStatus;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.PodRef;
import io.devhealth.schema.avro.Severity;
import io.devhealth.schema.avro.SourceKind;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class QueryViewsTest {

    private static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");
    private static final DeviceRef GPU0 = DeviceRef.newBuilder().setDriver("gpu.example.com").setPool("node-1").setDevice("gpu-0").build();

    @Test
    void shouldShowWhatAFlappingSourceIsHeldAtAndHowOftenItChanged() {
        DeviceNow.SourceNow held = new DeviceNow.SourceNow("NVML", "nvml", HealthStatus.HEALTHY, null, null, Instant.ofEpochMilli(5_000L),
                Instant.ofEpochMilli(6_000L), 30_000L,
                new DeviceNow.Hold(Instant.ofEpochMilli(4_000L), HealthStatus.UNHEALTHY, 7, Instant.ofEpochMilli(9_000L)));
        DeviceNow.SourceNow counting = new DeviceNow.SourceNow("DRA", "gpu.nvidia.com", HealthStatus.HEALTHY, null, null,
                Instant.ofEpochMilli(5_000L), Instant.ofEpochMilli(5_000L), 30_000L, null);
        DeviceNow now = new DeviceNow("gpu.nvidia.com", "node-1", "gpu-0", null, HealthStatus.UNHEALTHY, "flapping: held", "Flapping",
                Instant.ofEpochMilli(4_000L), List.of(held, counting));

        QueryViews.NodeDevice device = QueryViews.nodeDevice(now);

        assertThat(device.reason()).isEqualTo("Flapping");
        assertThat(device.health()).isEqualTo("Unhealthy");
        assertThat(device.since()).isEqualTo("1970-01-01T00:00:04Z");
        assertThat(device.sources()).extracting(QueryViews.Source::health).containsOnly("Healthy");
        assertThat(device.sources()).filteredOn(s -> s.kind().equals("NVML")).singleElement()
                .extracting(QueryViews.Source::damping)
                .isEqualTo(new QueryViews.Damping("1970-01-01T00:00:04Z", "Unhealthy", 7, "1970-01-01T00:00:09Z"));
        assertThat(device.sources()).filteredOn(s -> s.kind().equals("DRA")).singleElement()
                .extracting(QueryViews.Source::damping).as("no hold, no damping").isNull();
    }

    @Test
    void shouldSpellAPodsHealthAsItsConditionAndPostMortemRecordDo() throws Exception {
        PodDeviceStatus status = PodDeviceStatus.newBuilder()
                .setPod(new PodRef("ml", "train-0", null))
                .setNode("node-1")
                .setVersion(3)
                .setUpdatedAt(T0)
                .setSummary(HealthStatus.UNHEALTHY)
                .setContainers(List.of(ContainerDeviceStatus.newBuilder().setName("main").setClaims(List.of(
                        new ClaimDeviceStatus("train-0-gpu", "ml", List.of(
                                device(GPU0, HealthStatus.UNHEALTHY),
                                device(DeviceRef.newBuilder(GPU0).setDevice("gpu-1").build(), HealthStatus.UNKNOWN),
                                device(DeviceRef.newBuilder(GPU0).setDevice("gpu-2").build(), HealthStatus.HEALTHY)))))
                        .build()))
                .build();

        // As the server writes it: the words, never the enum's symbols, are what a user compares with kubectl.
        JsonNode answer = JsonMapper.builder().build().valueToTree(QueryViews.pod(status, null));

        assertThat(answer.get("summary").asText()).isEqualTo("Unhealthy");
        assertThat(answer.at("/containers/0/claims/0/devices")).extracting(d -> d.get("health").asText())
                .containsExactly("Unhealthy", "Unknown", "Healthy");
    }

    @Test
    void shouldSpellBothEndsOfATransitionAsKubernetesDoes() {
        HealthTransition transition = HealthTransition.newBuilder()
                .setId("a").setNode("node-1").setDevice(GPU0).setAt(T0)
                .setFrom(HealthStatus.HEALTHY).setTo(HealthStatus.UNHEALTHY)
                .setSource(SourceKind.DRA).setSeverity(Severity.CRITICAL)
                .build();

        QueryViews.Transition view = QueryViews.transition(transition);

        assertThat(view.from() + "->" + view.to()).isEqualTo("Healthy->Unhealthy");
        assertThat(view.source()).isEqualTo("DRA");
        assertThat(view.severity()).isEqualTo("CRITICAL");
    }

    private static DeviceStatus device(DeviceRef ref, HealthStatus health) {
        return DeviceStatus.newBuilder().setDevice(ref).setResourceId(ref.getDriver() + "/" + ref.getPool() + "/" + ref.getDevice())
                .setHealth(health).setSince(T0).build();
    }
}
