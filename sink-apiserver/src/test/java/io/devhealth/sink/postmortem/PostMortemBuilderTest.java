package io.devhealth.sink.postmortem;

import static io.devhealth.sink.PodStatusFixtures.device;
import static io.devhealth.sink.PodStatusFixtures.status;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.DevicePluginResourceStatus;
import io.devhealth.schema.avro.DeviceStatus;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.simulators.kube.PodFixtures;
import io.devhealth.sink.PodStatusFixtures;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PostMortemBuilderTest {

    private final Pod pod = PodFixtures.podWithClaim("ml", "train-0", "node-a", "main", "gpu", "train-0-gpu-x1", "big");

    /** Allocation results as a ResourceClaim with the requests {@code big} and {@code small} would have them. */
    private static ClaimAllocations allocations(Map<String, String> requestsByDevice) {
        return new ClaimAllocations(null, null) {
            @Override
            public Map<String, String> requestsByDevice(String namespace, String claimName, String podUid) {
                return requestsByDevice;
            }
        };
    }

    @Test
    void shouldNameEntryAfterThePodClaimReferenceAndRequest() {
        Map<String, List<DevicePostMortem.ResourceRecord>> built = PostMortemBuilder.entries(pod,
                status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY, device("gpu-0", HealthStatus.UNHEALTHY, "XID 79")),
                ClaimAllocations.NONE);

        assertThat(built).containsOnlyKeys("main");
        assertThat(built.get("main")).singleElement().satisfies(entry -> {
            assertThat(entry.name()).isEqualTo("claim:gpu/big");
            assertThat(entry.claim()).isEqualTo("gpu");
            assertThat(entry.resourceClaimName()).isEqualTo("train-0-gpu-x1");
            assertThat(entry.devices()).singleElement().satisfies(d -> {
                assertThat(d.resourceID()).isEqualTo("gpu.example.com/gpu=gpu-0");
                assertThat(d.driver() + "/" + d.pool() + "/" + d.device()).isEqualTo("gpu.example.com/node-a/gpu-0");
                assertThat(d.health()).isEqualTo("Unhealthy");
                assertThat(d.message()).isEqualTo("XID 79");
                assertThat(d.since()).isEqualTo(PodStatusFixtures.T0.toString());
            });
        });
    }

    @Test
    void shouldUseClaimNameAloneWhenTheContainerClaimHasNoRequest() {
        Pod noRequest = PodFixtures.podWithClaim("ml", "train-0", "node-a", "main", "gpu", "train-0-gpu-x1", null);

        Map<String, List<DevicePostMortem.ResourceRecord>> built = PostMortemBuilder.entries(noRequest,
                status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.HEALTHY, device("gpu-0", HealthStatus.HEALTHY, null)),
                ClaimAllocations.NONE);

        assertThat(built.get("main")).extracting(DevicePostMortem.ResourceRecord::name).containsExactly("claim:gpu");
        assertThat(built.get("main").get(0).devices().get(0).message()).isNull();
    }

    @Test
    void shouldListTheDevicesOfAClaimWithSeveralRequestsPerRequestAsTheKubeletDoes() {
        Pod twoContainers = new PodBuilder(pod).editSpec()
                .addNewContainer().withName("helper").withImage(PodFixtures.IMAGE)
                    .withNewResources().addNewClaim().withName("gpu").withRequest("small").endClaim().endResources()
                .endContainer()
                .endSpec().build();
        PodDeviceStatus status = status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY,
                device("gpu-0", HealthStatus.UNHEALTHY, "XID 79"), device("gpu-1", HealthStatus.HEALTHY, null));
        PodDeviceStatus both = PodDeviceStatus.newBuilder(status).setContainers(List.of(status.getContainers().get(0),
                io.devhealth.schema.avro.ContainerDeviceStatus.newBuilder(status.getContainers().get(0)).setName("helper").build())).build();
        ClaimAllocations allocated = allocations(Map.of("gpu.example.com/node-a/gpu-0", "big", "gpu.example.com/node-a/gpu-1", "small/mig"));

        Map<String, List<DevicePostMortem.ResourceRecord>> built = PostMortemBuilder.entries(twoContainers, both, allocated);

        assertThat(built.get("main")).singleElement().satisfies(entry -> {
            assertThat(entry.name()).isEqualTo("claim:gpu/big");
            assertThat(entry.devices()).extracting(DevicePostMortem.DeviceRecord::device, DevicePostMortem.DeviceRecord::request)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("gpu-0", "big"));
        });
        assertThat(built.get("helper")).singleElement().satisfies(entry -> {
            assertThat(entry.name()).isEqualTo("claim:gpu/small");
            assertThat(entry.devices()).extracting(DevicePostMortem.DeviceRecord::device, DevicePostMortem.DeviceRecord::request)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("gpu-1", "small/mig"));
        });
    }

    @Test
    void shouldResolveClaimsMadeFromTemplatesThroughPodStatus() {
        Pod templated = new PodBuilder(pod)
                .editSpec().editFirstResourceClaim().withResourceClaimName(null).withResourceClaimTemplateName("gpu-template").endResourceClaim().endSpec()
                .editOrNewStatus().addNewResourceClaimStatus().withName("gpu").withResourceClaimName("train-0-gpu-generated").endResourceClaimStatus().endStatus()
                .build();

        Map<String, List<DevicePostMortem.ResourceRecord>> built = PostMortemBuilder.entries(templated,
                status("ml", "train-0", "main", "train-0-gpu-generated", HealthStatus.HEALTHY, device("gpu-0", HealthStatus.HEALTHY, null)),
                ClaimAllocations.NONE);

        assertThat(built.get("main")).extracting(DevicePostMortem.ResourceRecord::name).containsExactly("claim:gpu/big");
    }

    @Test
    void shouldSkipClaimsThePodDoesNotReference() {
        Map<String, List<DevicePostMortem.ResourceRecord>> built = PostMortemBuilder.entries(pod,
                status("ml", "train-0", "main", "someone-elses-claim", HealthStatus.HEALTHY, device("gpu-0", HealthStatus.HEALTHY, null)),
                ClaimAllocations.NONE);

        assertThat(built).isEmpty();
    }

    @Test
    void shouldDropRepeatedResourceIdsAndCutMessagesAtUtf8Boundary() {
        String longMessage = "温度".repeat(400); // 2400 bytes
        Map<String, List<DevicePostMortem.ResourceRecord>> built = PostMortemBuilder.entries(pod,
                status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY,
                        device("gpu-0", HealthStatus.UNHEALTHY, longMessage), device("gpu-0", HealthStatus.HEALTHY, null)),
                ClaimAllocations.NONE);

        assertThat(built.get("main").get(0).devices()).singleElement().satisfies(d -> {
            byte[] bytes = d.message().getBytes(StandardCharsets.UTF_8);
            assertThat(bytes.length).isLessThanOrEqualTo(1024).isGreaterThan(1020);
            assertThat(new String(bytes, StandardCharsets.UTF_8)).isEqualTo(d.message());
        });
    }

    @Test
    void shouldListDevicePluginResourcesTheContainerRequestsAndMapSharedGpusToTheirGpu() {
        Pod gpuPod = new PodBuilder(pod).editSpec().editFirstContainer().editOrNewResources()
                .addToLimits("nvidia.com/gpu", new Quantity("2"))
                .endResources().endContainer().endSpec().build();
        var status = status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY, device("gpu-0", HealthStatus.HEALTHY, null));
        status.getContainers().get(0).setDevicePluginResources(List.of(
                new DevicePluginResourceStatus("nvidia.com/gpu", List.of(
                        DeviceStatus.newBuilder(device("", HealthStatus.UNHEALTHY, "XID 79")).setResourceId("GPU-1f2e::3").build(),
                        DeviceStatus.newBuilder(device("", HealthStatus.HEALTHY, null)).setResourceId("GPU-77aa").build())),
                new DevicePluginResourceStatus("rdma/hca", List.of(device("hca-0", HealthStatus.HEALTHY, null)))));

        Map<String, List<DevicePostMortem.ResourceRecord>> built = PostMortemBuilder.entries(gpuPod, status, ClaimAllocations.NONE);

        assertThat(built.get("main")).extracting(DevicePostMortem.ResourceRecord::name).containsExactly("claim:gpu/big", "nvidia.com/gpu");
        assertThat(built.get("main").get(1).devices()).extracting(DevicePostMortem.DeviceRecord::resourceID,
                        DevicePostMortem.DeviceRecord::gpuUUID, DevicePostMortem.DeviceRecord::health)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("GPU-1f2e::3", "GPU-1f2e", "Unhealthy"),
                        org.assertj.core.groups.Tuple.tuple("GPU-77aa", "GPU-77aa", "Healthy"));
    }

    @Test
    void shouldSayWhichDeviceWhichHealthSinceWhenAndWhyInOneLine() {
        DeviceStatus failed = DeviceStatus.newBuilder(device("gpu-0", HealthStatus.UNHEALTHY, "GPU has fallen off the bus"))
                .setReason("XID-79").setDevice(io.devhealth.schema.avro.DeviceRef.newBuilder()
                        .setDriver("gpu.example.com").setPool("node-a").setDevice("gpu-0").setUuid("GPU-1f2e").build()).build();

        String message = PostMortemBuilder.message(status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY,
                failed, device("gpu-1", HealthStatus.HEALTHY, null)));

        assertThat(message).isEqualTo("gpu.example.com/node-a/gpu-0 (GPU-1f2e) Unhealthy since 2026-11-29T10:00:00Z [XID-79]: "
                + "GPU has fallen off the bus");
        assertThat(PostMortemBuilder.message(status("ml", "train-0", "main", "c", HealthStatus.HEALTHY,
                device("gpu-0", HealthStatus.HEALTHY, null), device("gpu-1", HealthStatus.HEALTHY, null))))
                .isEqualTo("all 2 allocated devices are healthy");
    }
}
