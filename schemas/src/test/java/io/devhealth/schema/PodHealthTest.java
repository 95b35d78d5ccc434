package io.devhealth.schema;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.ClaimDeviceStatus;
import io.devhealth.schema.avro.ContainerDeviceStatus;
import io.devhealth.schema.avro.DevicePluginResourceStatus;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.DeviceStatus;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.PodRef;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The pod summary rule, the processor's and the sink's: the worst device, and Unknown when the pod shows none. */
class PodHealthTest {

    private static DeviceStatus device(String name, HealthStatus health) {
        return DeviceStatus.newBuilder().setDevice(DeviceRef.newBuilder().setDriver("gpu.nvidia.com").setPool("node-a").setDevice(name).build())
                .setResourceId(name).setHealth(health).setMessage("").setReason("").setSince(Instant.EPOCH).build();
    }

    private static ContainerDeviceStatus container(List<DeviceStatus> claimDevices, List<DeviceStatus> pluginDevices) {
        return ContainerDeviceStatus.newBuilder().setName("main")
                .setClaims(List.of(new ClaimDeviceStatus("gpu", "ml", claimDevices)))
                .setDevicePluginResources(pluginDevices.isEmpty() ? List.of() : List.of(new DevicePluginResourceStatus("nvidia.com/gpu", pluginDevices)))
                .build();
    }

    @Test
    void shouldSummariseAPodWithoutDevicesAsUnknown() {
        assertThat(PodHealth.summary(List.of())).isEqualTo(HealthStatus.UNKNOWN);
        assertThat(PodHealth.summary(List.of(container(List.of(), List.of())))).isEqualTo(HealthStatus.UNKNOWN);
    }

    @Test
    void shouldSummariseByTheWorstDeviceOfClaimsAndDevicePluginResources() {
        assertThat(PodHealth.summary(List.of(container(List.of(device("gpu-0", HealthStatus.HEALTHY)), List.of()))))
                .isEqualTo(HealthStatus.HEALTHY);
        assertThat(PodHealth.summary(List.of(container(List.of(device("gpu-0", HealthStatus.HEALTHY)),
                List.of(device("gpu-1", HealthStatus.UNKNOWN)))))).isEqualTo(HealthStatus.UNKNOWN);
        assertThat(PodHealth.summary(List.of(container(List.of(device("gpu-0", HealthStatus.UNKNOWN)),
                List.of(device("gpu-1", HealthStatus.UNHEALTHY)))))).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(PodHealth.summary(List.of(container(List.of(), List.of(device("gpu-1", HealthStatus.HEALTHY))),
                container(List.of(device("gpu-0", HealthStatus.UNHEALTHY)), List.of())))).isEqualTo(HealthStatus.UNHEALTHY);
    }

    @Test
    void shouldKeepTheWorstDeviceWhateverComesAfterIt() {
        assertThat(PodHealth.summary(List.of(container(List.of(device("gpu-0", HealthStatus.UNHEALTHY), device("gpu-1", HealthStatus.HEALTHY)),
                List.of())))).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(PodHealth.summary(List.of(container(List.of(), List.of(device("gpu-0", HealthStatus.UNKNOWN),
                device("gpu-1", HealthStatus.HEALTHY)))))).isEqualTo(HealthStatus.UNKNOWN);
    }

    @Test
    void shouldTellWhetherAStatusShowsADevice() {
        var empty = PodDeviceStatus.newBuilder().setPod(new PodRef("ml", "p", null))
                .setCluster("c").setNode("node-a").setVersion(1).setUpdatedAt(Instant.EPOCH).setSummary(HealthStatus.UNKNOWN)
                .setContainers(List.of(container(List.of(), List.of()))).build();
        assertThat(PodHealth.hasDevices(empty)).isFalse();
        assertThat(PodHealth.hasDevices(PodDeviceStatus.newBuilder(empty)
                .setContainers(List.of(container(List.of(), List.of(device("gpu-1", HealthStatus.HEALTHY))))).build())).isTrue();
        assertThat(PodHealth.hasDevices(PodDeviceStatus.newBuilder(empty)
                .setContainers(List.of(container(List.of(device("gpu-0", HealthStatus.HEALTHY)), List.of()))).build())).isTrue();
    }
}
