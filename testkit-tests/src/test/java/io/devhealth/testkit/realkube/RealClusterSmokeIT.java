package io.devhealth.testkit.realkube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.schema.proto.podresources.v1.ContainerResources;
import io.devhealth.schema.proto.podresources.v1.DynamicResource;
import io.devhealth.schema.proto.podresources.v1.ListPodResourcesRequest;
import io.devhealth.schema.proto.podresources.v1.PodResources;
import io.devhealth.schema.proto.podresources.v1.PodResourcesListerGrpc;
import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.GpuWorkloads;
import io.devhealth.simulators.realkube.RealNode;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.ResourceHealth;
import io.fabric8.kubernetes.api.model.ResourceStatus;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Proves the harness is the real thing: the scheduler allocates a claim from the driver's slice, the
 * kubelet prepares it through the driver and reports it over PodResources, the kubelet itself turns
 * the driver's health stream into {@code allocatedResourcesStatus}, and a container that exits 1 makes
 * the pod Failed. One pod walks through these steps in order.
 */
@RealKubernetes
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RealClusterSmokeIT {

    private static final String NAMESPACE = "smoke";
    private static final String POD = "train-0";
    private static final Duration WAIT = Duration.ofSeconds(60);

    private static KubernetesClient client;
    private static RealNode node;

    @BeforeAll
    static void startPod(ControlPlane plane, RealNode realNode) {
        client = plane.adminClient();
        node = realNode;
        GpuWorkloads.prepare(client, NAMESPACE);
        GpuWorkloads.claimTemplate(client, NAMESPACE, "one-gpu", 1);
        GpuWorkloads.batchPod(client, NAMESPACE, POD, "one-gpu");
    }

    @Test
    @Order(1)
    void shouldScheduleThePodAndAllocateItsClaimFromTheDriversSlice() {
        await().atMost(WAIT).untilAsserted(() -> assertThat(pod().getSpec().getNodeName()).isEqualTo(node.name()));
        ResourceClaim claim = await().atMost(WAIT).until(this::claim,
                c -> c.isPresent() && c.get().getStatus() != null && c.get().getStatus().getAllocation() != null).orElseThrow();
        List<DeviceRequestAllocationResult> results = claim.getStatus().getAllocation().getDevices().getResults();
        assertThat(results).singleElement().satisfies(r -> {
            assertThat(r.getDriver()).isEqualTo(RealNode.DRIVER_NAME);
            assertThat(r.getPool()).isEqualTo(node.name());
            assertThat(r.getDevice()).startsWith("gpu-");
        });
    }

    @Test
    @Order(2)
    void shouldRunThePodAfterTheKubeletPreparedTheClaimThroughTheDriver() {
        await().atMost(WAIT).untilAsserted(() -> assertThat(pod().getStatus().getPhase()).isEqualTo("Running"));
    }

    @Test
    @Order(3)
    void shouldListTheClaimWithItsCdiIdsOnTheKubeletsPodResourcesSocket() throws InterruptedException {
        ResourceClaim claim = claim().orElseThrow();
        String device = claim.getStatus().getAllocation().getDevices().getResults().get(0).getDevice();
        ManagedChannel channel = Grpc.newChannelBuilder("unix://" + node.podResourcesSocket(),
                InsecureChannelCredentials.create()).overrideAuthority("localhost").build();
        try {
            PodResources resources = PodResourcesListerGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .list(ListPodResourcesRequest.getDefaultInstance()).getPodResourcesList().stream()
                    .filter(p -> p.getNamespace().equals(NAMESPACE) && p.getName().equals(POD))
                    .findFirst().orElseThrow(() -> new AssertionError("PodResources does not list " + POD));
            ContainerResources container = resources.getContainers(0);
            assertThat(container.getName()).isEqualTo("main");
            DynamicResource dynamic = container.getDynamicResources(0);
            assertThat(dynamic.getClaimName()).isEqualTo(claim.getMetadata().getName());
            assertThat(dynamic.getClaimNamespace()).isEqualTo(NAMESPACE);
            assertThat(dynamic.getClaimResources(0).getDriverName()).isEqualTo(RealNode.DRIVER_NAME);
            assertThat(dynamic.getClaimResources(0).getPoolName()).isEqualTo(node.name());
            assertThat(dynamic.getClaimResources(0).getDeviceName()).isEqualTo(device);
            assertThat(dynamic.getClaimResources(0).getCdiDevicesList()).singleElement()
                    .satisfies(cdi -> assertThat(cdi.getName()).isEqualTo(cdiId(claim, device)));
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    @Order(4)
    void shouldHaveTheKubeletItselfWriteTheDriversUnhealthyReportIntoThePod() {
        ResourceClaim claim = claim().orElseThrow();
        String device = claim.getStatus().getAllocation().getDevices().getResults().get(0).getDevice();
        node.driver().setHealth(device, "Unhealthy", "XID 79: GPU has fallen off the bus");
        try {
            await().atMost(WAIT).untilAsserted(() -> {
                ResourceHealth health = allocatedHealth(pod()).orElseThrow(() -> new AssertionError("no allocatedResourcesStatus yet"));
                assertThat(health.getResourceID()).isEqualTo(cdiId(claim, device));
                assertThat(health.getHealth()).isEqualTo("Unhealthy");
                assertThat(health.getMessage()).isEqualTo("XID 79: GPU has fallen off the bus");
            });
        } finally {
            node.driver().setHealth(device, "Healthy", "");
        }
        await().atMost(WAIT).untilAsserted(() ->
                assertThat(allocatedHealth(pod()).orElseThrow().getHealth()).isEqualTo("Healthy"));
    }

    @Test
    @Order(5)
    void shouldMarkThePodFailedWhenItsContainerExitsWithCodeOne() {
        node.runtime().exit(NAMESPACE, POD, "main", 1, "training step 1200: CUDA error");
        await().atMost(WAIT).untilAsserted(() -> {
            Pod pod = pod();
            assertThat(pod.getStatus().getPhase()).isEqualTo("Failed");
            ContainerStatus main = pod.getStatus().getContainerStatuses().get(0);
            assertThat(main.getState().getTerminated().getExitCode()).isEqualTo(1);
        });
    }

    /**
     * When a deleted pod's containers are removed, the kubelet deletes every file matching the
     * container's log path followed by {@code *}; the fake runtime's log path is empty, so that is
     * every file of the kubelet's working directory. The harness gives each component a directory of
     * its own: this module's files must survive.
     */
    @Test
    @Order(6)
    void shouldKeepTheTestsWorkingDirectoryWhenTheKubeletRemovesADeletedPodsContainers() {
        client.pods().inNamespace(NAMESPACE).withName(POD).delete();
        await().atMost(Duration.ofSeconds(120)).untilAsserted(() -> assertThat(node.runtime().containers())
                .noneMatch(c -> POD.equals(c.pod())));
        assertThat(java.nio.file.Files.exists(java.nio.file.Path.of("pom.xml"))).as("the module's pom.xml").isTrue();
    }

    static String cdiId(ResourceClaim claim, String device) {
        return "k8s." + RealNode.DRIVER_NAME + "/gpu=" + claim.getMetadata().getUid() + "-" + device;
    }

    static Optional<ResourceHealth> allocatedHealth(Pod pod) {
        if (pod.getStatus() == null || pod.getStatus().getContainerStatuses().isEmpty()) {
            return Optional.empty();
        }
        List<ResourceStatus> statuses = pod.getStatus().getContainerStatuses().get(0).getAllocatedResourcesStatus();
        return statuses == null ? Optional.empty() : statuses.stream()
                .filter(s -> s.getName().equals("claim:gpu"))
                .flatMap(s -> s.getResources().stream()).findFirst();
    }

    private Pod pod() {
        return client.pods().inNamespace(NAMESPACE).withName(POD).get();
    }

    private Optional<ResourceClaim> claim() {
        return client.resources(ResourceClaim.class).inNamespace(NAMESPACE).list().getItems().stream()
                .filter(c -> c.getMetadata().getOwnerReferences().stream().anyMatch(o -> o.getName().equals(POD)))
                .findFirst();
    }
}
