package io.devhealth.sink;

import static io.devhealth.sink.PodStatusFixtures.device;
import static io.devhealth.sink.PodStatusFixtures.status;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.testkit.kube.PodFixtures;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ResourceStatus;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AllocatedResourcesStatusBuilderTest {

    private final Pod pod = PodFixtures.podWithClaim("ml", "train-0", "node-a", "main", "gpu", "train-0-gpu-x1", "big");

    @Test
    void shouldNameEntryAfterThePodClaimReferenceAndRequest() {
        Map<String, List<ResourceStatus>> built = AllocatedResourcesStatusBuilder.build(pod,
                status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY, device("gpu-0", HealthStatus.UNHEALTHY, "XID 79")));

        assertThat(built).containsOnlyKeys("main");
        assertThat(built.get("main")).singleElement().satisfies(entry -> {
            assertThat(entry.getName()).isEqualTo("claim:gpu/big");
            assertThat(entry.getResources()).singleElement().satisfies(r -> {
                assertThat(r.getResourceID()).isEqualTo("gpu.example.com/gpu=gpu-0");
                assertThat(r.getHealth()).isEqualTo("Unhealthy");
                assertThat(r.getMessage()).isEqualTo("XID 79");
            });
        });
    }

    @Test
    void shouldUseClaimNameAloneWhenTheContainerClaimHasNoRequest() {
        Pod noRequest = PodFixtures.podWithClaim("ml", "train-0", "node-a", "main", "gpu", "train-0-gpu-x1", null);

        Map<String, List<ResourceStatus>> built = AllocatedResourcesStatusBuilder.build(noRequest,
                status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.HEALTHY, device("gpu-0", HealthStatus.HEALTHY, null)));

        assertThat(built.get("main")).extracting(ResourceStatus::getName).containsExactly("claim:gpu");
        assertThat(built.get("main").get(0).getResources().get(0).getMessage()).isNull();
    }

    @Test
    void shouldResolveClaimsMadeFromTemplatesThroughPodStatus() {
        Pod templated = new PodBuilder(pod)
                .editSpec().editFirstResourceClaim().withResourceClaimName(null).withResourceClaimTemplateName("gpu-template").endResourceClaim().endSpec()
                .editOrNewStatus().addNewResourceClaimStatus().withName("gpu").withResourceClaimName("train-0-gpu-generated").endResourceClaimStatus().endStatus()
                .build();

        Map<String, List<ResourceStatus>> built = AllocatedResourcesStatusBuilder.build(templated,
                status("ml", "train-0", "main", "train-0-gpu-generated", HealthStatus.HEALTHY, device("gpu-0", HealthStatus.HEALTHY, null)));

        assertThat(built.get("main")).extracting(ResourceStatus::getName).containsExactly("claim:gpu/big");
    }

    @Test
    void shouldSkipClaimsThePodDoesNotReference() {
        Map<String, List<ResourceStatus>> built = AllocatedResourcesStatusBuilder.build(pod,
                status("ml", "train-0", "main", "someone-elses-claim", HealthStatus.HEALTHY, device("gpu-0", HealthStatus.HEALTHY, null)));

        assertThat(built).isEmpty();
    }

    @Test
    void shouldDropRepeatedResourceIdsAndCutMessagesAtUtf8Boundary() {
        String longMessage = "温度".repeat(400); // 2400 bytes
        Map<String, List<ResourceStatus>> built = AllocatedResourcesStatusBuilder.build(pod,
                status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY,
                        device("gpu-0", HealthStatus.UNHEALTHY, longMessage), device("gpu-0", HealthStatus.HEALTHY, null)));

        assertThat(built.get("main").get(0).getResources()).singleElement().satisfies(r -> {
            byte[] bytes = r.getMessage().getBytes(StandardCharsets.UTF_8);
            assertThat(bytes.length).isLessThanOrEqualTo(1024).isGreaterThan(1020);
            assertThat(new String(bytes, StandardCharsets.UTF_8)).isEqualTo(r.getMessage());
        });
    }

    @Test
    void shouldWriteDevicePluginEntriesOnlyForResourcesTheContainerRequests() {
        Pod gpuPod = new PodBuilder(pod).editSpec().editFirstContainer().editOrNewResources()
                .addToLimits("nvidia.com/gpu", new io.fabric8.kubernetes.api.model.Quantity("1"))
                .endResources().endContainer().endSpec().build();
        var status = status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY, device("gpu-0", HealthStatus.HEALTHY, null));
        status.getContainers().get(0).setDevicePluginResources(List.of(
                new io.devhealth.schema.avro.DevicePluginResourceStatus("nvidia.com/gpu",
                        List.of(io.devhealth.schema.avro.DeviceStatus.newBuilder(device("gpu-1", HealthStatus.UNHEALTHY, "XID 79")).setResourceId("GPU-1f2e").build())),
                new io.devhealth.schema.avro.DevicePluginResourceStatus("rdma/hca",
                        List.of(device("hca-0", HealthStatus.HEALTHY, null)))));

        Map<String, List<ResourceStatus>> built = AllocatedResourcesStatusBuilder.build(gpuPod, status);

        assertThat(built.get("main")).extracting(ResourceStatus::getName).containsExactly("claim:gpu/big", "nvidia.com/gpu");
        assertThat(built.get("main").get(1).getResources()).singleElement().satisfies(r -> {
            assertThat(r.getResourceID()).isEqualTo("GPU-1f2e");
            assertThat(r.getHealth()).isEqualTo("Unhealthy");
        });
    }
}
