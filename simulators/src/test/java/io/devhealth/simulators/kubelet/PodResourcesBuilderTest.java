package io.devhealth.simulators.kubelet;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.proto.podresources.v1.ClaimResource;
import io.devhealth.schema.proto.podresources.v1.ContainerResources;
import io.devhealth.schema.proto.podresources.v1.DynamicResource;
import io.devhealth.schema.proto.podresources.v1.PodResources;
import org.junit.jupiter.api.Test;

class PodResourcesBuilderTest {

    @Test
    void shouldGroupDevicesOfOneClaimIntoOneDynamicResource() {
        PodResources pod = PodResourcesBuilder.pod("ml", "trainer-0")
                .container("main")
                    .draDevice("claim-a", "ml", "gpu.example.com", "node-a", "gpu-0", "gpu.example.com/gpu=gpu-0")
                    .draDevice("claim-a", "ml", "gpu.example.com", "node-a", "gpu-1", "gpu.example.com/gpu=gpu-1")
                    .draDevice("claim-b", "ml", "nic.example.com", "node-a", "nic-0")
                    .done()
                .build();

        ContainerResources main = pod.getContainers(0);
        assertThat(main.getDynamicResourcesList()).extracting(DynamicResource::getClaimName)
                .containsExactly("claim-a", "claim-b");
        assertThat(main.getDynamicResources(0).getClaimResourcesList())
                .extracting(ClaimResource::getDeviceName).containsExactly("gpu-0", "gpu-1");
        assertThat(main.getDynamicResources(0).getClaimResources(1).getCdiDevicesList())
                .as("no CDI quirk: each device carries only its own ids")
                .extracting(c -> c.getName()).containsExactly("gpu.example.com/gpu=gpu-1");
        assertThat(main.getDynamicResources(1).getClaimResources(0).getCdiDevicesCount()).isZero();
    }

    @Test
    void shouldBuildSeveralContainersWithDevicePluginResources() {
        PodResources pod = FakeKubelet.pod("ml", "trainer-0")
                .container("main").devicePlugin("nvidia.com/gpu", "GPU-1", "GPU-2").done()
                .container("sidecar").done()
                .build();

        assertThat(pod.getNamespace()).isEqualTo("ml");
        assertThat(pod.getName()).isEqualTo("trainer-0");
        assertThat(pod.getContainersList()).extracting(ContainerResources::getName).containsExactly("main", "sidecar");
        assertThat(pod.getContainers(0).getDevices(0).getDeviceIdsList()).containsExactly("GPU-1", "GPU-2");
        assertThat(pod.getContainers(1).getDevicesCount()).isZero();
    }

    @Test
    void shouldSetShareIdForSharedDevices() {
        PodResources pod = FakeKubelet.pod("ml", "p")
                .container("main").sharedDraDevice("claim", "ml", "gpu.example.com", "pool", "gpu-0", "share-1").done()
                .build();

        ClaimResource resource = pod.getContainers(0).getDynamicResources(0).getClaimResources(0);
        assertThat(resource.hasShareId()).isTrue();
        assertThat(resource.getShareId()).isEqualTo("share-1");
    }
}
