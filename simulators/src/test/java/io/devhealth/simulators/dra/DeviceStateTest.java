package io.devhealth.simulators.dra;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DeviceStateTest {

    @Test
    void shouldBuildStatesWithHelpers() {
        assertThat(DeviceState.healthy("p", "d"))
                .isEqualTo(new DeviceState("p", "d", DeviceState.Health.HEALTHY, "", 0));
        assertThat(DeviceState.unhealthy("p", "d", "ecc").withTimeoutSeconds(60))
                .isEqualTo(new DeviceState("p", "d", DeviceState.Health.UNHEALTHY, "ecc", 60));
        assertThat(DeviceState.unknown("p", "d").withHealth(DeviceState.Health.HEALTHY).withMessage("ok"))
                .isEqualTo(new DeviceState("p", "d", DeviceState.Health.HEALTHY, "ok", 0));
    }

    @Test
    void shouldTreatANullMessageAsEmpty() {
        assertThat(new DeviceState("p", "d", DeviceState.Health.UNKNOWN, null, 0).message()).isEmpty();
    }

    @Test
    void shouldUseTheProtoEnumNumbers() {
        assertThat(DeviceState.Health.UNKNOWN.ordinal()).isEqualTo(
                io.devhealth.schema.proto.drahealth.v1alpha1.HealthStatus.UNKNOWN.getNumber());
        assertThat(DeviceState.Health.HEALTHY.ordinal()).isEqualTo(
                io.devhealth.schema.proto.drahealth.v1.HealthStatus.HEALTHY.getNumber());
        assertThat(DeviceState.Health.UNHEALTHY.ordinal()).isEqualTo(
                io.devhealth.schema.proto.drahealth.v1.HealthStatus.UNHEALTHY.getNumber());
    }
}
