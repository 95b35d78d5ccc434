package io.devhealth.simulators.kubelet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.schema.proto.podresources.v1.AllocatableResourcesRequest;
import io.devhealth.schema.proto.podresources.v1.AllocatableResourcesResponse;
import io.devhealth.schema.proto.podresources.v1.ContainerDevices;
import io.devhealth.schema.proto.podresources.v1.GetPodResourcesRequest;
import io.devhealth.schema.proto.podresources.v1.ListPodResourcesRequest;
import io.devhealth.schema.proto.podresources.v1.ListPodResourcesResponse;
import io.devhealth.schema.proto.podresources.v1.PodResources;
import io.devhealth.schema.proto.podresources.v1.PodResourcesListerGrpc;
import io.devhealth.simulators.grpc.UnixChannels;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FakeKubeletIT {

    @TempDir
    Path tmp;

    private FakeKubelet kubelet;
    private ManagedChannel channel;
    private PodResourcesListerGrpc.PodResourcesListerBlockingStub lister;

    @BeforeEach
    void startKubelet() {
        kubelet = FakeKubelet.start(tmp.resolve("pod-resources").resolve("kubelet.sock"));
        channel = UnixChannels.open(kubelet.socket());
        lister = PodResourcesListerGrpc.newBlockingStub(channel);
    }

    @AfterEach
    void stopKubelet() {
        UnixChannels.close(channel);
        kubelet.close();
    }

    @Test
    void shouldListWhatWasSet() {
        PodResources trainer = FakeKubelet.pod("ml", "trainer-0")
                .container("main")
                    .draDevice("trainer-0-gpu-x7k2p", "ml", "gpu.example.com", "node-a", "gpu-0",
                            "gpu.example.com/gpu=gpu-0")
                    .done()
                .build();
        PodResources legacy = FakeKubelet.pod("ml", "legacy")
                .container("main").devicePlugin("nvidia.com/gpu", "GPU-1f2e3d4c").done()
                .build();
        assertThat(lister.list(ListPodResourcesRequest.getDefaultInstance()).getPodResourcesList()).isEmpty();

        kubelet.setPods(trainer, legacy);
        ListPodResourcesResponse response = lister.list(ListPodResourcesRequest.getDefaultInstance());

        assertThat(response.getPodResourcesList()).containsExactly(trainer, legacy);
        assertThat(response.getPodResources(0).getContainers(0).getDynamicResources(0).getClaimResources(0)
                .getCdiDevices(0).getName()).isEqualTo("gpu.example.com/gpu=gpu-0");
        assertThat(kubelet.listCalls()).isEqualTo(2);
    }

    @Test
    void shouldGetOnePodOrFailLikeTheKubelet() {
        PodResources pod = FakeKubelet.pod("ml", "trainer-0").container("main").done().build();
        kubelet.setPods(pod);

        assertThat(lister.get(GetPodResourcesRequest.newBuilder().setPodNamespace("ml").setPodName("trainer-0").build())
                .getPodResources()).isEqualTo(pod);
        assertThatThrownBy(() -> lister.get(GetPodResourcesRequest.newBuilder()
                        .setPodNamespace("ml").setPodName("missing").build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNKNOWN);
                    assertThat(e.getStatus().getDescription()).isEqualTo("pod missing in namespace ml not found");
                });
        assertThat(kubelet.getCalls()).isEqualTo(2);
    }

    @Test
    void shouldServeAllocatableResources() {
        AllocatableResourcesResponse allocatable = AllocatableResourcesResponse.newBuilder()
                .addDevices(ContainerDevices.newBuilder().setResourceName("nvidia.com/gpu").addDeviceIds("GPU-1"))
                .build();
        kubelet.setAllocatable(allocatable);

        assertThat(lister.getAllocatableResources(AllocatableResourcesRequest.getDefaultInstance()))
                .isEqualTo(allocatable);
        assertThat(kubelet.allocatableCalls()).isEqualTo(1);
    }

    @Test
    void shouldFailCallsUntilTheFailureIsCleared() {
        kubelet.failWith(Status.UNAVAILABLE);

        assertThatThrownBy(() -> lister.list(ListPodResourcesRequest.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));

        kubelet.clearFailure();
        assertThat(lister.list(ListPodResourcesRequest.getDefaultInstance()).getPodResourcesList()).isEmpty();
        assertThat(kubelet.listCalls()).isEqualTo(2);
    }
}
