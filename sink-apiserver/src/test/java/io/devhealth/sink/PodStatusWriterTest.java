package io.devhealth.sink;

import static io.devhealth.sink.PodStatusFixtures.device;
import static io.devhealth.sink.PodStatusFixtures.status;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.testkit.kube.PodFixtures;
import io.devhealth.testkit.time.MutableClock;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Instant;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class PodStatusWriterTest {

    KubernetesMockServer server;
    KubernetesClient client;

    private final MutableClock clock = MutableClock.at("2026-11-29T10:00:00Z");

    @BeforeEach
    void createPod() {
        PodFixtures.createRunning(client, PodFixtures.podWithClaim("ml", "train-0", "node-a", "main", "gpu", "train-0-gpu-x1", "gpu"));
    }

    private Pod pod() {
        return client.pods().inNamespace("ml").withName("train-0").get();
    }

    private PodCondition condition() {
        return pod().getStatus().getConditions().stream()
                .filter(c -> PodStatusWriter.CONDITION_TYPE.equals(c.getType())).findFirst().orElseThrow();
    }

    @Test
    void shouldWriteAllocatedResourcesStatusAndKeepEveryKubeletField() {
        ContainerStatus before = pod().getStatus().getContainerStatuses().get(0);
        PodStatusWriter writer = new PodStatusWriter(client, SinkConfig.Mode.ALL, clock);

        PodStatusWriter.Outcome outcome = writer.write(status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY,
                device("gpu-0", HealthStatus.UNHEALTHY, "XID 79")));

        assertThat(outcome).isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        ContainerStatus after = pod().getStatus().getContainerStatuses().get(0);
        assertThat(pod().getStatus().getContainerStatuses()).hasSize(1);
        assertThat(after.getReady()).isEqualTo(before.getReady());
        assertThat(after.getRestartCount()).isEqualTo(before.getRestartCount());
        assertThat(after.getState()).isEqualTo(before.getState());
        assertThat(after.getAllocatedResourcesStatus()).singleElement().satisfies(entry -> {
            assertThat(entry.getName()).isEqualTo("claim:gpu/gpu");
            assertThat(entry.getResources()).singleElement().satisfies(r -> assertThat(r.getHealth()).isEqualTo("Unhealthy"));
        });
        assertThat(condition().getStatus()).isEqualTo("False");
        assertThat(condition().getReason()).isEqualTo("DeviceUnhealthy");
        assertThat(condition().getMessage()).contains("gpu.example.com/node-a/gpu-0 Unhealthy: XID 79");
    }

    @Test
    void shouldNotWriteWhenNothingChanges() {
        PodStatusWriter writer = new PodStatusWriter(client, SinkConfig.Mode.ALL, clock);
        var status = status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.HEALTHY, device("gpu-0", HealthStatus.HEALTHY, null));

        assertThat(writer.write(status)).isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        String resourceVersion = pod().getMetadata().getResourceVersion();
        assertThat(writer.write(status)).isEqualTo(PodStatusWriter.Outcome.UNCHANGED);
        assertThat(pod().getMetadata().getResourceVersion()).isEqualTo(resourceVersion);
    }

    @Test
    void shouldRecoverConditionAndKeepTransitionTimeWhileStatusIsUnchanged() {
        PodStatusWriter writer = new PodStatusWriter(client, SinkConfig.Mode.ALL, clock);
        writer.write(status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY, device("gpu-0", HealthStatus.UNHEALTHY, "XID 79")));
        clock.advance(java.time.Duration.ofMinutes(5));
        writer.write(status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY, device("gpu-0", HealthStatus.UNHEALTHY, "XID 79, 2nd")));
        assertThat(condition().getLastTransitionTime()).isEqualTo("2026-11-29T10:00:00Z");

        clock.advance(java.time.Duration.ofMinutes(5));
        writer.write(status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.HEALTHY, device("gpu-0", HealthStatus.HEALTHY, null)));

        assertThat(condition().getStatus()).isEqualTo("True");
        assertThat(condition().getLastTransitionTime()).isEqualTo("2026-11-29T10:10:00Z");
        assertThat(pod().getStatus().getConditions().stream().filter(c -> PodStatusWriter.CONDITION_TYPE.equals(c.getType())))
                .hasSize(1);
        assertThat(pod().getStatus().getContainerStatuses().get(0).getAllocatedResourcesStatus().get(0).getResources().get(0).getHealth())
                .isEqualTo("Healthy");
    }

    @Test
    void shouldWriteOnlyTheConditionOnLiveContainersInTerminatedMode() {
        PodStatusWriter writer = new PodStatusWriter(client, SinkConfig.Mode.TERMINATED, clock);

        writer.write(status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY, device("gpu-0", HealthStatus.UNHEALTHY, "XID 79")));

        assertThat(pod().getStatus().getContainerStatuses().get(0).getAllocatedResourcesStatus()).isNullOrEmpty();
        assertThat(condition().getStatus()).isEqualTo("False");

        PodFixtures.markTerminated(client, "ml", "train-0", 1, Instant.parse("2026-11-29T10:00:05Z"));
        writer.write(status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY, device("gpu-0", HealthStatus.UNHEALTHY, "XID 79")));

        assertThat(pod().getStatus().getContainerStatuses().get(0).getAllocatedResourcesStatus()).singleElement()
                .satisfies(entry -> assertThat(entry.getResources().get(0).getHealth()).isEqualTo("Unhealthy"));
    }

    @Test
    void shouldDropStatusOfPodThatNoLongerExists() {
        PodStatusWriter writer = new PodStatusWriter(client, SinkConfig.Mode.ALL, clock);

        assertThat(writer.write(status("ml", "gone", "main", "c", HealthStatus.HEALTHY, device("gpu-0", HealthStatus.HEALTHY, null))))
                .isEqualTo(PodStatusWriter.Outcome.POD_GONE);
    }

    @Test
    void shouldGuardThePatchWithTheResourceVersionItRead() {
        Pod read = pod();
        var patch = new PodStatusWriter(client, SinkConfig.Mode.ALL, clock).patch(read,
                status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.HEALTHY, device("gpu-0", HealthStatus.HEALTHY, null)));

        assertThat(patch.get(0)).containsEntry("op", "test").containsEntry("path", "/metadata/resourceVersion")
                .containsEntry("value", read.getMetadata().getResourceVersion());
        assertThat(patch).extracting(op -> op.get("path")).doesNotContain("/status/containerStatuses");
    }
}
