package io.devhealth.collector.podresources;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.proto.podresources.v1.CDIDevice;
import io.devhealth.schema.proto.podresources.v1.ClaimResource;
import io.devhealth.schema.proto.podresources.v1.ContainerDevices;
import io.devhealth.schema.proto.podresources.v1.ContainerResources;
import io.devhealth.schema.proto.podresources.v1.DynamicResource;
import io.devhealth.schema.proto.podresources.v1.ListPodResourcesResponse;
import io.devhealth.schema.proto.podresources.v1.PodResources;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class AllocationsMapperTest {

    private static ClaimResource resource(String driver, String device, String... cdi) {
        ClaimResource.Builder builder = ClaimResource.newBuilder().setDriverName(driver).setPoolName("pool").setDeviceName(device);
        for (String name : cdi) {
            builder.addCdiDevices(CDIDevice.newBuilder().setName(name));
        }
        return builder.build();
    }

    @Test
    void shouldGiveEachDeviceOnlyItsOwnCdiIdsDespiteTheKubeletAccumulatingThemPerDriver() {
        DynamicResource claim = DynamicResource.newBuilder().setClaimName("c").setClaimNamespace("ns")
                .addClaimResources(resource("gpu.example.com", "gpu-0", "gpu.example.com/gpu=gpu-0"))
                .addClaimResources(resource("gpu.example.com", "gpu-1", "gpu.example.com/gpu=gpu-0", "gpu.example.com/gpu=gpu-1"))
                .addClaimResources(resource("nic.example.com", "nic-0", "nic.example.com/nic=nic-0"))
                .build();

        List<ClaimDevice> devices = AllocationsMapper.devices(claim);

        assertThat(devices).extracting(ClaimDevice::getDevice).containsExactly("gpu-0", "gpu-1", "nic-0");
        assertThat(devices).extracting(ClaimDevice::getCdiIds).containsExactly(
                List.of("gpu.example.com/gpu=gpu-0"), List.of("gpu.example.com/gpu=gpu-1"), List.of("nic.example.com/nic=nic-0"));
    }

    @Test
    void shouldKeepDraClaimsAndDevicePluginResourcesAndDropPodsWithoutDevices() {
        ListPodResourcesResponse response = ListPodResourcesResponse.newBuilder()
                .addPodResources(PodResources.newBuilder().setNamespace("ns").setName("z-gpu")
                        .addContainers(ContainerResources.newBuilder().setName("main")
                                .addDynamicResources(DynamicResource.newBuilder().setClaimName("claim-1").setClaimNamespace("ns")
                                        .addClaimResources(resource("gpu.example.com", "gpu-0")))
                                .addDevices(ContainerDevices.newBuilder().setResourceName("nvidia.com/gpu").addDeviceIds("GPU-1234")))
                        .addContainers(ContainerResources.newBuilder().setName("sidecar")))
                .addPodResources(PodResources.newBuilder().setNamespace("ns").setName("a-cpu-only")
                        .addContainers(ContainerResources.newBuilder().setName("main").addCpuIds(3)))
                .build();

        NodeAllocations allocations = AllocationsMapper.map("c1", "node-a", response, Instant.parse("2026-11-29T10:00:00Z"));

        assertThat(allocations.getPods()).singleElement().satisfies(pod -> {
            assertThat(pod.getName()).isEqualTo("z-gpu");
            assertThat(pod.getContainers()).singleElement().satisfies(container -> {
                assertThat(container.getName()).isEqualTo("main");
                assertThat(container.getClaims()).singleElement().satisfies(c -> assertThat(c.getClaimName()).isEqualTo("claim-1"));
                assertThat(container.getDevicePluginResources()).singleElement()
                        .satisfies(d -> assertThat(d.getDeviceIds()).containsExactly("GPU-1234"));
            });
        });
    }

    @Test
    void shouldSortPodsSoThatEqualAllocationsCompareEqual() {
        PodResources a = PodResources.newBuilder().setNamespace("ns").setName("a").addContainers(ContainerResources.newBuilder()
                .setName("c").addDevices(ContainerDevices.newBuilder().setResourceName("r").addDeviceIds("1"))).build();
        PodResources b = a.toBuilder().setName("b").build();
        Instant now = Instant.now();

        NodeAllocations first = AllocationsMapper.map("", "n", ListPodResourcesResponse.newBuilder().addPodResources(a).addPodResources(b).build(), now);
        NodeAllocations second = AllocationsMapper.map("", "n", ListPodResourcesResponse.newBuilder().addPodResources(b).addPodResources(a).build(), now);

        assertThat(first.getPods()).isEqualTo(second.getPods());
    }
}
