package io.devhealth.sink.condition;

import static io.devhealth.sink.PodStatusFixtures.device;
import static io.devhealth.sink.PodStatusFixtures.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.devhealth.schema.avro.ClaimDeviceStatus;
import io.devhealth.schema.avro.ContainerDeviceStatus;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.PodRef;
import io.devhealth.simulators.kube.PodFixtures;
import io.devhealth.sink.postmortem.DevicePostMortem;
import io.devhealth.testkit.time.MutableClock;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Instant;
import java.util.List;
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
    void shouldWriteOnlyItsConditionAndLeaveEveryContainerStatusToTheKubelet() {
        ContainerStatus before = pod().getStatus().getContainerStatuses().get(0);
        PodStatusWriter writer = PodStatusWriter.builder(client, clock).build();

        PodStatusWriter.Outcome outcome = writer.write(status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY,
                device("gpu-0", HealthStatus.UNHEALTHY, "XID 79")));

        assertThat(outcome).isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        assertThat(pod().getStatus().getContainerStatuses()).containsExactly(before);
        assertThat(condition().getStatus()).isEqualTo("False");
        assertThat(condition().getReason()).isEqualTo("DeviceUnhealthy");
        assertThat(condition().getMessage()).isEqualTo("gpu.example.com/node-a/gpu-0 Unhealthy since 2026-11-29T10:00:00Z: XID 79");
        assertThat(client.resources(DevicePostMortem.class).inNamespace("ml").list().getItems()).as("no record of a live pod").isEmpty();
    }

    @Test
    void shouldRefuseAnEmptyListOfStatusesWhichNamesNoPod() {
        PodStatusWriter writer = PodStatusWriter.builder(client, clock).build();

        assertThatThrownBy(() -> writer.write(List.of(), null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no status to write");
    }

    @Test
    void shouldNotWriteWhenNothingChanges() {
        PodStatusWriter writer = PodStatusWriter.builder(client, clock).build();
        var status = status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.HEALTHY, device("gpu-0", HealthStatus.HEALTHY, null));

        assertThat(writer.write(status)).isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        String resourceVersion = pod().getMetadata().getResourceVersion();
        assertThat(writer.write(status)).isEqualTo(PodStatusWriter.Outcome.UNCHANGED);
        assertThat(pod().getMetadata().getResourceVersion()).isEqualTo(resourceVersion);
    }

    @Test
    void shouldRecoverConditionAndKeepTransitionTimeWhileStatusIsUnchanged() {
        PodStatusWriter writer = PodStatusWriter.builder(client, clock).build();
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
        assertThat(condition().getMessage()).isEqualTo("the allocated device is healthy");
    }

    @Test
    void shouldRecordATerminatedPodInItsOwnResourceNamedAfterThePod() {
        PodStatusWriter writer = PodStatusWriter.builder(client, clock).build();
        writer.write(status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY, device("gpu-0", HealthStatus.UNHEALTHY, "XID 79")));

        Pod terminated = PodFixtures.markTerminated(client, "ml", "train-0", 1, Instant.parse("2026-11-29T10:00:05Z"));
        ContainerStatus kubelets = terminated.getStatus().getContainerStatuses().get(0);
        writer.write(status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY, device("gpu-0", HealthStatus.UNHEALTHY, "XID 79")));

        assertThat(pod().getStatus().getContainerStatuses()).containsExactly(kubelets);
        DevicePostMortem record = client.resources(DevicePostMortem.class).inNamespace("ml").withName("train-0").get();
        assertThat(record.getMetadata().getOwnerReferences()).as("outlives the pod").isNullOrEmpty();
        assertThat(record.getMetadata().getLabels()).containsEntry(DevicePostMortem.POD_UID_LABEL, pod().getMetadata().getUid());
        assertThat(record.getSpec().pod()).isEqualTo(new DevicePostMortem.PodIdentity("train-0", pod().getMetadata().getUid()));
        assertThat(record.getSpec().node()).isEqualTo("node-a");
        assertThat(record.getSpec().phase()).isEqualTo("Failed");
        assertThat(record.getSpec().finishedAt()).isEqualTo("2026-11-29T10:00:05Z");
        assertThat(record.getSpec().health()).isEqualTo("Unhealthy");
        assertThat(record.getSpec().message()).isEqualTo(condition().getMessage());
        assertThat(record.getSpec().containers()).singleElement().satisfies(c -> {
            assertThat(c.exitCode()).isEqualTo(1);
            assertThat(c.resources()).singleElement().satisfies(r -> assertThat(r.devices()).singleElement()
                    .satisfies(d -> assertThat(d.health() + "|" + d.message()).isEqualTo("Unhealthy|XID 79")));
        });
    }

    @Test
    void shouldNeverGiveAPodReCreatedUnderTheSameNameThePreviousPodsStatus() {
        PodStatusWriter writer = PodStatusWriter.builder(client, clock).build();
        var earlier = status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY, device("gpu-0", HealthStatus.UNHEALTHY, "XID 79"));
        writer.write(earlier);
        client.pods().inNamespace("ml").withName("train-0").withGracePeriod(0).delete();
        await().until(() -> pod() == null);
        // The same name, a new claim (made from the template for the new pod), possibly on another node.
        PodFixtures.createRunning(client, PodFixtures.podWithClaim("ml", "train-0", "node-b", "main", "gpu", "train-0-gpu-y2", "gpu"));

        assertThat(writer.write(earlier)).isEqualTo(PodStatusWriter.Outcome.OTHER_POD);
        assertThat(PodStatusWriter.hasCondition(pod(), PodStatusWriter.CONDITION_TYPE)).as("starts clean").isFalse();
        var withUid = PodDeviceStatus.newBuilder(earlier).setPod(new PodRef("ml", "train-0", "uid-of-the-earlier-pod")).build();
        assertThat(writer.write(withUid)).isEqualTo(PodStatusWriter.Outcome.OTHER_POD);
        var fromNodeA = status("ml", "train-0", "main", "train-0-gpu-y2", HealthStatus.UNHEALTHY, device("gpu-0", HealthStatus.UNHEALTHY, "XID 79"));
        assertThat(writer.write(fromNodeA)).as("the status comes from node-a, the pod runs on node-b").isEqualTo(PodStatusWriter.Outcome.OTHER_POD);
        assertThat(PodStatusWriter.hasCondition(pod(), PodStatusWriter.CONDITION_TYPE)).isFalse();

        var its = PodDeviceStatus.newBuilder(fromNodeA).setNode("node-b").build();
        assertThat(writer.write(its)).isEqualTo(PodStatusWriter.Outcome.WRITTEN);
    }

    /**
     * The pod deleted and re-created under its name on the same node, with the same ResourceClaim
     * (one named in the spec, not made from a template): node and claims match, and only the UID the
     * status carries (from the claim's reservedFor) tells the earlier pod from the new one.
     */
    @Test
    void shouldRefuseAStatusOfAnEarlierPodReCreatedOnTheSameNodeWithTheSameClaim() {
        PodStatusWriter writer = PodStatusWriter.builder(client, clock).build();
        String earlierUid = pod().getMetadata().getUid();
        var earlier = PodDeviceStatus.newBuilder(status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY,
                device("gpu-0", HealthStatus.UNHEALTHY, "XID 79"))).setPod(new PodRef("ml", "train-0", earlierUid)).build();
        client.pods().inNamespace("ml").withName("train-0").withGracePeriod(0).delete();
        await().until(() -> pod() == null);
        PodFixtures.createRunning(client, PodFixtures.podWithClaim("ml", "train-0", "node-a", "main", "gpu", "train-0-gpu-x1", "gpu"));
        String uid = pod().getMetadata().getUid();
        assertThat(uid).as("a new pod").isNotEqualTo(earlierUid);

        assertThat(writer.write(earlier)).isEqualTo(PodStatusWriter.Outcome.OTHER_POD);
        assertThat(PodStatusWriter.hasCondition(pod(), PodStatusWriter.CONDITION_TYPE)).isFalse();

        var its = PodDeviceStatus.newBuilder(earlier).setPod(new PodRef("ml", "train-0", uid)).build();
        assertThat(writer.write(its)).as("the same status with the new pod's UID").isEqualTo(PodStatusWriter.Outcome.WRITTEN);
    }

    /**
     * The pod re-created under its name on the same node, given a new claim from its template; the
     * status carries no UID (PodResources reports none), so only the claims it names tell the earlier
     * pod from the new one: a claim the pod does not reference, or one of that name in another
     * namespace, is refused.
     */
    @Test
    void shouldRefuseAStatusNamingAClaimThePodOnTheSameNodeDoesNotReference() {
        PodStatusWriter writer = PodStatusWriter.builder(client, clock).build();
        var earlier = status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY, device("gpu-0", HealthStatus.UNHEALTHY, "XID 79"));
        client.pods().inNamespace("ml").withName("train-0").withGracePeriod(0).delete();
        await().until(() -> pod() == null);
        PodFixtures.createRunning(client, PodFixtures.podWithClaim("ml", "train-0", "node-a", "main", "gpu", "train-0-gpu-y2", "gpu"));

        assertThat(writer.write(earlier)).as("the earlier pod's claim").isEqualTo(PodStatusWriter.Outcome.OTHER_POD);
        var its = status("ml", "train-0", "main", "train-0-gpu-y2", HealthStatus.UNHEALTHY, device("gpu-0", HealthStatus.UNHEALTHY, "XID 79"));
        var elsewhere = PodDeviceStatus.newBuilder(its).setContainers(List.of(ContainerDeviceStatus.newBuilder(its.getContainers().get(0))
                .setClaims(List.of(ClaimDeviceStatus.newBuilder(its.getContainers().get(0).getClaims().get(0)).setClaimNamespace("other").build()))
                .build())).build();
        assertThat(writer.write(elsewhere)).as("a claim of that name in another namespace").isEqualTo(PodStatusWriter.Outcome.OTHER_POD);
        assertThat(PodStatusWriter.hasCondition(pod(), PodStatusWriter.CONDITION_TYPE)).isFalse();

        assertThat(writer.write(its)).isEqualTo(PodStatusWriter.Outcome.WRITTEN);
    }

    @Test
    void shouldWriteOnlyStatusesFromTheNodeThePodIsBoundTo() {
        PodStatusWriter writer = PodStatusWriter.builder(client, clock).build();
        var fromNodeA = status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY, device("gpu-0", HealthStatus.UNHEALTHY, "XID 79"));

        assertThat(writer.write(PodDeviceStatus.newBuilder(fromNodeA).setNode("node-b").build()))
                .as("another node claims the pod").isEqualTo(PodStatusWriter.Outcome.OTHER_POD);
        assertThat(writer.write(PodDeviceStatus.newBuilder(fromNodeA).setNode("").build()))
                .as("a status naming no node").isEqualTo(PodStatusWriter.Outcome.OTHER_POD);
        assertThat(PodStatusWriter.hasCondition(pod(), PodStatusWriter.CONDITION_TYPE)).isFalse();

        assertThat(writer.write(fromNodeA)).isEqualTo(PodStatusWriter.Outcome.WRITTEN);
    }

    @Test
    void shouldNotWriteToAPodBoundToNoNode() {
        Pod pending = PodFixtures.podWithClaim("ml", "queued-0", "node-a", "main", "gpu", "queued-0-gpu-x1", "gpu");
        pending.getSpec().setNodeName(null);
        client.pods().resource(pending).create();
        PodStatusWriter writer = PodStatusWriter.builder(client, clock).build();

        assertThat(writer.write(status("ml", "queued-0", "main", "queued-0-gpu-x1", HealthStatus.UNHEALTHY,
                device("gpu-0", HealthStatus.UNHEALTHY, "XID 79")))).isEqualTo(PodStatusWriter.Outcome.OTHER_POD);
        assertThat(client.pods().inNamespace("ml").withName("queued-0").get().getStatus())
                .satisfiesAnyOf(status -> assertThat(status).isNull(),
                        status -> assertThat(status.getConditions()).noneMatch(c -> PodStatusWriter.CONDITION_TYPE.equals(c.getType())));
    }

    @Test
    void shouldDropStatusOfPodThatNoLongerExists() {
        PodStatusWriter writer = PodStatusWriter.builder(client, clock).build();

        assertThat(writer.write(status("ml", "gone", "main", "c", HealthStatus.HEALTHY, device("gpu-0", HealthStatus.HEALTHY, null))))
                .isEqualTo(PodStatusWriter.Outcome.POD_GONE);
    }

    @Test
    void shouldGuardThePatchWithTheResourceVersionItRead() {
        Pod read = pod();
        var patch = PodStatusWriter.builder(client, clock).build().patch(read,
                status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.HEALTHY, device("gpu-0", HealthStatus.HEALTHY, null)));

        assertThat(patch.get(0)).containsEntry("op", "test").containsEntry("path", "/metadata/resourceVersion")
                .containsEntry("value", read.getMetadata().getResourceVersion());
        assertThat(patch).extracting(op -> String.valueOf(op.get("path"))).noneMatch(path -> path.startsWith("/status/containerStatuses"));
    }
}
