package io.devhealth.schema.proto;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.InvalidProtocolBufferException;
import io.devhealth.schema.proto.pluginregistration.v1.PluginInfo;
import io.devhealth.schema.proto.pluginregistration.v1.RegistrationGrpc;
import io.devhealth.schema.proto.podresources.v1.ClaimResource;
import io.devhealth.schema.proto.podresources.v1.ContainerResources;
import io.devhealth.schema.proto.podresources.v1.DynamicResource;
import io.devhealth.schema.proto.podresources.v1.ListPodResourcesResponse;
import io.devhealth.schema.proto.podresources.v1.PodResources;
import io.devhealth.schema.proto.podresources.v1.PodResourcesListerGrpc;
import io.grpc.MethodDescriptor;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/**
 * The copied .proto files must stay wire-compatible with the kubelet's. The bytes below are written
 * by hand from the field numbers and types of the upstream files the copies follow (k8s.io/kubelet
 * pkg/apis/dra-health/v1alpha1 and v1, pkg/apis/podresources/v1, api.proto), not produced by the
 * generated code: tag = field_number << 3 | wire_type (0 = varint, 2 = length-
 * delimited), then a varint length for strings and messages. A renumbered field, a changed type
 * or a wrong package makes these tests fail.
 */
class ProtobufGoldenBytesTest {

    /**
     * NodeWatchResourcesResponse{devices=[DeviceHealth{device={pool_name="pool-a", device_name="gpu-0"},
     * health=UNHEALTHY, last_updated_time=1764411330, health_check_timeout_seconds=60, message="XID 79"}]}.
     */
    private static final String NODE_WATCH_RESOURCES_RESPONSE = ""
            + "0a 23"                              // devices (1, LEN) 35 bytes: DeviceHealth
            + " 0a 0f"                             //   device (1, LEN) 15 bytes: DeviceIdentifier
            + " 0a 06 706f6f6c2d61"                //     pool_name (1, LEN) "pool-a"
            + " 12 05 6770752d30"                  //     device_name (2, LEN) "gpu-0"
            + " 10 02"                             //   health (2, VARINT) 2 = UNHEALTHY
            + " 18 c28fabc906"                     //   last_updated_time (3, VARINT) 1764411330
            + " 20 3c"                             //   health_check_timeout_seconds (4, VARINT) 60
            + " 2a 06 58494420 3739";              //   message (5, LEN) "XID 79"

    private static final String POD_RESOURCES_LIST_RESPONSE = ""
            + "0a 9601"                            // pod_resources (1, LEN) 150 bytes: PodResources
            + " 0a 07 747261696e2d30"              //   name (1) "train-0"
            + " 12 02 6d6c"                        //   namespace (2) "ml"
            + " 1a 8601"                           //   containers (3, LEN) 134 bytes: ContainerResources
            + " 0a 04 6d61696e"                    //     name (1) "main"
            + " 12 1e"                             //     devices (2, LEN) 30 bytes: ContainerDevices
            + " 0a 0e 6e76696469612e636f6d2f677075" //       resource_name (1) "nvidia.com/gpu"
            + " 12 05 4750552d31"                  //       device_ids (2) "GPU-1"
            + " 12 05 4750552d32"                  //       device_ids (2) "GPU-2"
            + " 2a 5e"                             //     dynamic_resources (5, LEN) 94 bytes: DynamicResource
            + " 12 0b 747261696e2d302d677075"      //       claim_name (2) "train-0-gpu"
            + " 1a 02 6d6c"                        //       claim_namespace (3) "ml"
            + " 22 4b"                             //       claim_resources (4, LEN) 75 bytes: ClaimResource
            + " 0a 21"                             //         cdi_devices (1, LEN) 33 bytes: CDIDevice
            + " 0a 1f 6b38732e6770752e6e76696469612e636f6d2f6465766963653d6770752d30"
                                                   //           name (1) "k8s.gpu.nvidia.com/device=gpu-0"
            + " 12 0e 6770752e6e76696469612e636f6d" //        driver_name (2) "gpu.nvidia.com"
            + " 1a 06 6e6f64652d61"                //         pool_name (3) "node-a"
            + " 22 05 6770752d30"                  //         device_name (4) "gpu-0"
            + " 2a 07 73686172652d31";             //         share_id (5) "share-1"

    private static final String PLUGIN_INFO = ""
            + "0a 09 445241506c7567696e"           // type (1) "DRAPlugin"
            + " 12 0e 6770752e6e76696469612e636f6d" // name (2) "gpu.nvidia.com"
            + " 1a 30 2f7661722f6c69622f6b7562656c65742f706c7567696e732f"
            + "6770752e6e76696469612e636f6d2f6472612e736f636b"
                                                   // endpoint (3) "/var/lib/kubelet/plugins/gpu.nvidia.com/dra.sock"
            + " 22 0c 76312e445241506c7567696e"    // supported_versions (4) "v1.DRAPlugin"
            + " 22 1a 7631616c706861312e4452415265736f757263654865616c7468";
                                                   // supported_versions (4) "v1alpha1.DRAResourceHealth"

    @Test
    void shouldParseHandWrittenV1alpha1DraHealthBytes() throws InvalidProtocolBufferException {
        byte[] golden = hex(NODE_WATCH_RESOURCES_RESPONSE);

        var response = io.devhealth.schema.proto.drahealth.v1alpha1.NodeWatchResourcesResponse.parseFrom(golden);

        assertThat(response.getDevicesCount()).isEqualTo(1);
        var device = response.getDevices(0);
        assertThat(device.getDevice().getPoolName()).isEqualTo("pool-a");
        assertThat(device.getDevice().getDeviceName()).isEqualTo("gpu-0");
        assertThat(device.getHealth()).isEqualTo(io.devhealth.schema.proto.drahealth.v1alpha1.HealthStatus.UNHEALTHY);
        assertThat(device.getLastUpdatedTime()).isEqualTo(1_764_411_330L);
        assertThat(device.getHealthCheckTimeoutSeconds()).isEqualTo(60L);
        assertThat(device.getMessage()).isEqualTo("XID 79");
        assertThat(device.getUnknownFields().asMap()).isEmpty();
        assertThat(response.toByteArray()).isEqualTo(golden);
    }

    @Test
    void shouldParseTheSameBytesAsV1DraHealth() throws InvalidProtocolBufferException {
        byte[] golden = hex(NODE_WATCH_RESOURCES_RESPONSE);

        var response = io.devhealth.schema.proto.drahealth.v1.NodeWatchResourcesResponse.parseFrom(golden);

        var device = response.getDevices(0);
        assertThat(device.getDevice().getPoolName()).isEqualTo("pool-a");
        assertThat(device.getDevice().getDeviceName()).isEqualTo("gpu-0");
        assertThat(device.getHealth()).isEqualTo(io.devhealth.schema.proto.drahealth.v1.HealthStatus.UNHEALTHY);
        assertThat(device.getLastUpdatedTime()).isEqualTo(1_764_411_330L);
        assertThat(device.getHealthCheckTimeoutSeconds()).isEqualTo(60L);
        assertThat(device.getMessage()).isEqualTo("XID 79");
        assertThat(response.toByteArray()).isEqualTo(golden);
    }

    @Test
    void shouldKeepAnUnknownHealthValueAndSkipAFieldFromAFutureKubelet() throws InvalidProtocolBufferException {
        byte[] bytes = hex("0a 07"                 // devices (1, LEN) 7 bytes
                + " 10 07"                         //   health (2) 7: not a known HealthStatus
                + " 32 03 6e6577");                //   field 6 (LEN) "new": not in the proto

        var device = io.devhealth.schema.proto.drahealth.v1alpha1.NodeWatchResourcesResponse.parseFrom(bytes)
                .getDevices(0);

        assertThat(device.getHealthValue()).isEqualTo(7);
        assertThat(device.getHealth())
                .isEqualTo(io.devhealth.schema.proto.drahealth.v1alpha1.HealthStatus.UNRECOGNIZED);
        assertThat(device.getUnknownFields().hasField(6)).isTrue();
    }

    @Test
    void shouldParseHandWrittenPodResourcesBytes() throws InvalidProtocolBufferException {
        byte[] golden = hex(POD_RESOURCES_LIST_RESPONSE);

        ListPodResourcesResponse response = ListPodResourcesResponse.parseFrom(golden);

        PodResources pod = response.getPodResources(0);
        assertThat(pod.getName()).isEqualTo("train-0");
        assertThat(pod.getNamespace()).isEqualTo("ml");
        ContainerResources container = pod.getContainers(0);
        assertThat(container.getName()).isEqualTo("main");
        assertThat(container.getDevices(0).getResourceName()).isEqualTo("nvidia.com/gpu");
        assertThat(container.getDevices(0).getDeviceIdsList()).containsExactly("GPU-1", "GPU-2");
        DynamicResource claim = container.getDynamicResources(0);
        assertThat(claim.getClaimName()).isEqualTo("train-0-gpu");
        assertThat(claim.getClaimNamespace()).isEqualTo("ml");
        ClaimResource resource = claim.getClaimResources(0);
        assertThat(resource.getCdiDevicesList()).extracting(d -> d.getName())
                .containsExactly("k8s.gpu.nvidia.com/device=gpu-0");
        assertThat(resource.getDriverName()).isEqualTo("gpu.nvidia.com");
        assertThat(resource.getPoolName()).isEqualTo("node-a");
        assertThat(resource.getDeviceName()).isEqualTo("gpu-0");
        assertThat(resource.hasShareId()).isTrue();
        assertThat(resource.getShareId()).isEqualTo("share-1");
        assertThat(response.toByteArray()).isEqualTo(golden);
    }

    @Test
    void shouldTellAnAbsentShareIdFromAnEmptyOne() throws InvalidProtocolBufferException {
        ClaimResource absent = ClaimResource.parseFrom(hex("12 01 64")); // driver_name (2) "d"
        ClaimResource empty = ClaimResource.parseFrom(hex("12 01 64 2a 00")); // + share_id (5) ""

        assertThat(absent.hasShareId()).isFalse();
        assertThat(empty.hasShareId()).isTrue();
        assertThat(empty.getShareId()).isEmpty();
    }

    @Test
    void shouldParseHandWrittenPluginInfoBytes() throws InvalidProtocolBufferException {
        byte[] golden = hex(PLUGIN_INFO);

        PluginInfo info = PluginInfo.parseFrom(golden);

        assertThat(info.getType()).isEqualTo("DRAPlugin");
        assertThat(info.getName()).isEqualTo("gpu.nvidia.com");
        assertThat(info.getEndpoint()).isEqualTo("/var/lib/kubelet/plugins/gpu.nvidia.com/dra.sock");
        assertThat(info.getSupportedVersionsList()).containsExactly("v1.DRAPlugin", "v1alpha1.DRAResourceHealth");
        assertThat(info.toByteArray()).isEqualTo(golden);
    }

    /** gRPC sends "/" + full method name as the HTTP/2 :path; these are the paths the kubelet uses. */
    @Test
    void shouldUseTheKubeletsGrpcMethodPaths() {
        assertThat(path(io.devhealth.schema.proto.drahealth.v1alpha1.DRAResourceHealthGrpc.getNodeWatchResourcesMethod()))
                .isEqualTo("/v1alpha1.DRAResourceHealth/NodeWatchResources");
        assertThat(path(io.devhealth.schema.proto.drahealth.v1.DRAResourceHealthGrpc.getNodeWatchResourcesMethod()))
                .isEqualTo("/v1.DRAResourceHealth/NodeWatchResources");
        assertThat(path(PodResourcesListerGrpc.getListMethod())).isEqualTo("/v1.PodResourcesLister/List");
        assertThat(path(RegistrationGrpc.getGetInfoMethod())).isEqualTo("/pluginregistration.Registration/GetInfo");
    }

    @Test
    void shouldDeclareServerStreamingForNodeWatchResources() {
        assertThat(io.devhealth.schema.proto.drahealth.v1alpha1.DRAResourceHealthGrpc.getNodeWatchResourcesMethod()
                .getType()).isEqualTo(MethodDescriptor.MethodType.SERVER_STREAMING);
        assertThat(io.devhealth.schema.proto.drahealth.v1.DRAResourceHealthGrpc.getNodeWatchResourcesMethod()
                .getType()).isEqualTo(MethodDescriptor.MethodType.SERVER_STREAMING);
    }

    private static String path(MethodDescriptor<?, ?> method) {
        return "/" + method.getFullMethodName();
    }

    private static byte[] hex(String spaced) {
        return HexFormat.of().parseHex(spaced.replace(" ", ""));
    }
}
