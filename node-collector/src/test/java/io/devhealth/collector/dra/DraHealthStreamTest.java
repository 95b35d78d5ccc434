package io.devhealth.collector.dra;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.proto.drahealth.v1alpha1.DeviceHealth;
import io.devhealth.schema.proto.drahealth.v1alpha1.DeviceIdentifier;
import io.devhealth.schema.proto.drahealth.v1alpha1.NodeWatchResourcesResponse;
import java.util.List;
import org.junit.jupiter.api.Test;

class DraHealthStreamTest {

    @Test
    void shouldMapUnknownEnumNumbersToUnknownAsTheKubeletDoes() {
        assertThat(DraHealthStream.health(0)).isEqualTo(HealthStatus.UNKNOWN);
        assertThat(DraHealthStream.health(1)).isEqualTo(HealthStatus.HEALTHY);
        assertThat(DraHealthStream.health(2)).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(DraHealthStream.health(7)).isEqualTo(HealthStatus.UNKNOWN);
    }

    @Test
    void shouldIgnoreNegativeTimeouts() {
        NodeWatchResourcesResponse response = NodeWatchResourcesResponse.newBuilder()
                .addDevices(DeviceHealth.newBuilder()
                        .setDevice(DeviceIdentifier.newBuilder().setPoolName("p").setDeviceName("d"))
                        .setHealthValue(2).setHealthCheckTimeoutSeconds(-5).setMessage("m"))
                .build();

        assertThat(DraHealthStream.fromV1alpha1(response))
                .isEqualTo(List.of(new ObservedDevice("p", "d", HealthStatus.UNHEALTHY, "m", 0)));
    }

    @Test
    void shouldPickV1OverV1alpha1AndNothingWithoutHealth() {
        assertThat(HealthApiVersion.pick(List.of("v1.DRAPlugin", "v1alpha1.DRAResourceHealth", "v1.DRAResourceHealth")))
                .contains(HealthApiVersion.V1);
        assertThat(HealthApiVersion.pick(List.of("v1.DRAPlugin", "v1alpha1.DRAResourceHealth"))).contains(HealthApiVersion.V1ALPHA1);
        assertThat(HealthApiVersion.pick(List.of("v1.DRAPlugin"))).isEmpty();
    }
}
