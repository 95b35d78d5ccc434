package io.devhealth.sink.realkube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.devhealth.schema.avro.ClaimDeviceStatus;
import io.devhealth.schema.avro.ContainerDeviceStatus;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.DeviceStatus;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.PodRef;
import io.devhealth.sink.PodStatusWriter;
import io.devhealth.sink.SinkConfig;
import io.devhealth.testkit.realkube.ControlPlane;
import io.devhealth.testkit.realkube.GpuWorkloads;
import io.devhealth.testkit.realkube.KubeBinaries;
import io.devhealth.testkit.realkube.RealKubernetes;
import io.devhealth.testkit.realkube.RealNode;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.InputStream;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The sink against the real API server and kubelet, acting as the ServiceAccount that the shipped
 * {@code k8s/base/sink-apiserver/rbac.yaml} binds: what it may do, what it may not, and what of its
 * writes to a terminated pod the kubelet's status manager leaves standing.
 */
@RealKubernetes
class SinkOnRealKubeletIT {

    private static final String NAMESPACE = "sink-real";
    private static final Duration WAIT = Duration.ofSeconds(60);

    private static KubernetesClient admin;
    private static KubernetesClient sink;

    @BeforeAll
    static void applyShippedRbac(ControlPlane plane) throws Exception {
        admin = plane.adminClient();
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName("devhealth").endMetadata().build())
                .serverSideApply();
        try (InputStream rbac = Files.newInputStream(KubeBinaries.repositoryRoot().resolve("k8s/base/sink-apiserver/rbac.yaml"))) {
            admin.load(rbac).forceConflicts().serverSideApply();
        }
        sink = plane.clientFor("devhealth", "devhealth-sink");
        GpuWorkloads.prepare(admin, NAMESPACE);
        GpuWorkloads.claimTemplate(admin, NAMESPACE, "one-gpu", 1);
    }

    @Test
    void shouldBeRefusedEverythingOutsideTheShippedRole(RealNode node) {
        GpuWorkloads.batchPod(admin, NAMESPACE, "guarded", "one-gpu");
        await().atMost(WAIT).until(() -> "Running".equals(pod("guarded").getStatus().getPhase()));

        assertThat(sink.pods().inNamespace(NAMESPACE).withName("guarded").get()).as("pods get is granted").isNotNull();
        assertForbidden(() -> sink.pods().inNamespace(NAMESPACE).withName("guarded")
                .edit(p -> new PodBuilder(p).editMetadata().addToLabels("owned", "by-sink").endMetadata().build()));
        assertForbidden(() -> sink.pods().inNamespace(NAMESPACE).withName("guarded").delete());
        assertForbidden(() -> sink.pods().inNamespace(NAMESPACE).withName("guarded").updateStatus(pod("guarded")));
        assertForbidden(() -> sink.configMaps().inNamespace(NAMESPACE).list());
        assertThat(pod("guarded").getMetadata().getLabels()).doesNotContainKey("owned");
    }

    /**
     * The regression test of what the design relies on: today's sink writes a terminated pod's
     * {@code allocatedResourcesStatus} and its condition; after three kubelet sync periods only the
     * condition is left.
     */
    @Test
    void shouldSeeTheKubeletPutBackTheSinksAllocatedResourcesStatusOnATerminatedPodButKeepItsCondition(RealNode node) {
        GpuWorkloads.batchPod(admin, NAMESPACE, "died", "one-gpu");
        await().atMost(WAIT).until(() -> "Running".equals(pod("died").getStatus().getPhase()));
        ResourceClaim claim = admin.resources(ResourceClaim.class).inNamespace(NAMESPACE).list().getItems().stream()
                .filter(c -> c.getMetadata().getOwnerReferences().stream().anyMatch(o -> o.getName().equals("died")))
                .findFirst().orElseThrow();
        String device = claim.getStatus().getAllocation().getDevices().getResults().get(0).getDevice();
        node.runtime().exit(NAMESPACE, "died", "main", 1, "CUDA error: an illegal memory access");
        await().atMost(WAIT).until(() -> "Failed".equals(pod("died").getStatus().getPhase()));
        Instant finishedAt = Instant.parse(pod("died").getStatus().getContainerStatuses().get(0).getState()
                .getTerminated().getFinishedAt());

        String resourceId = "devhealth.test/" + device;
        PodStatusWriter writer = new PodStatusWriter(sink, SinkConfig.Mode.TERMINATED, Clock.systemUTC());
        assertThat(writer.write(unhealthy(node, pod("died"), claim, device, resourceId, finishedAt.minusSeconds(5))))
                .isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        assertThat(sinkEntry(pod("died"), resourceId)).as("accepted by the API server").isTrue();

        await("the kubelet's reconcile").atMost(WAIT).until(() -> !sinkEntry(pod("died"), resourceId));
        sleep(Duration.ofSeconds(30));
        Pod after = pod("died");
        assertThat(sinkEntry(after, resourceId)).as("the sink's allocatedResourcesStatus entry").isFalse();
        assertThat(after.getStatus().getConditions()).filteredOn(c -> PodStatusWriter.CONDITION_TYPE.equals(c.getType()))
                .singleElement().satisfies(c -> {
                    assertThat(c.getStatus()).isEqualTo("False");
                    assertThat(c.getMessage()).contains(device);
                });
    }

    private static PodDeviceStatus unhealthy(RealNode node, Pod pod, ResourceClaim claim, String device, String resourceId,
                                             Instant since) {
        DeviceStatus status = DeviceStatus.newBuilder()
                .setDevice(DeviceRef.newBuilder().setDriver(RealNode.DRIVER_NAME).setPool(node.name()).setDevice(device).build())
                .setResourceId(resourceId)
                .setHealth(HealthStatus.UNHEALTHY)
                .setMessage("XID 79: GPU has fallen off the bus")
                .setSince(since)
                .build();
        return PodDeviceStatus.newBuilder()
                .setPod(new PodRef(NAMESPACE, pod.getMetadata().getName(), pod.getMetadata().getUid()))
                .setNode(node.name())
                .setVersion(1)
                .setUpdatedAt(since)
                .setSummary(HealthStatus.UNHEALTHY)
                .setContainers(List.of(ContainerDeviceStatus.newBuilder().setName("main")
                        .setClaims(List.of(new ClaimDeviceStatus(claim.getMetadata().getName(), NAMESPACE, List.of(status))))
                        .build()))
                .build();
    }

    private static boolean sinkEntry(Pod pod, String resourceId) {
        var statuses = pod.getStatus().getContainerStatuses().get(0).getAllocatedResourcesStatus();
        return statuses != null && statuses.stream().flatMap(s -> s.getResources().stream())
                .anyMatch(r -> resourceId.equals(r.getResourceID()));
    }

    private static void assertForbidden(Runnable call) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(KubernetesClientException.class,
                e -> assertThat(e.getCode()).isEqualTo(403));
    }

    private static Pod pod(String name) {
        return admin.pods().inNamespace(NAMESPACE).withName(name).get();
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
