package io.devhealth.processor.internals.rules;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.SourceKind;
import java.util.List;
import org.junit.jupiter.api.Test;

class DeviceHealthMergerTest {

    private static SourceReport dra(HealthStatus health, long at, String message) {
        return new SourceReport(SourceKind.DRA, "gpu.example.com", health, message, null, at, at, 30_000);
    }

    private static SourceReport nvml(HealthStatus health, long at, String message, String reason) {
        return new SourceReport(SourceKind.NVML, "nvml", health, message, reason, at, at, 10_000);
    }

    @Test
    void shouldLetAFreshUnhealthyWinOverAFreshHealthy() {
        EffectiveHealth merged = DeviceHealthMerger.merge(List.of(dra(HealthStatus.HEALTHY, 0, null),
                nvml(HealthStatus.UNHEALTHY, 1_000, "double-bit ECC", "XID-48")), 5_000);

        assertThat(merged.health()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(merged.source()).isEqualTo(SourceKind.NVML);
        assertThat(merged.reason()).isEqualTo("XID-48");
        assertThat(merged.message()).isEqualTo("double-bit ECC");
        assertThat(merged.deadline()).as("the first fresh report to go stale").isEqualTo(11_000);
    }

    @Test
    void shouldStayUnhealthyWhenANewerHealthyComesFromAnotherSource() {
        // The newest report is the Healthy one: a merge that let "the newest fresh report decide" would say Healthy.
        EffectiveHealth merged = DeviceHealthMerger.merge(List.of(nvml(HealthStatus.UNHEALTHY, 1_000, "double-bit ECC", "XID-48"),
                dra(HealthStatus.HEALTHY, 4_000, null)), 5_000);

        assertThat(merged.health()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(merged.source()).isEqualTo(SourceKind.NVML);
        assertThat(merged.message()).isEqualTo("double-bit ECC");
    }

    @Test
    void shouldIgnoreAStaleUnhealthy() {
        EffectiveHealth merged = DeviceHealthMerger.merge(List.of(dra(HealthStatus.HEALTHY, 5_000, null),
                nvml(HealthStatus.UNHEALTHY, 0, "old", "XID-48")), 12_000);

        assertThat(merged.health()).isEqualTo(HealthStatus.HEALTHY);
        assertThat(merged.deadline()).isEqualTo(35_000);
    }

    @Test
    void shouldBeHealthyOnlyWithAFreshHealthy() {
        EffectiveHealth merged = DeviceHealthMerger.merge(List.of(dra(HealthStatus.UNKNOWN, 5_000, "absent"),
                nvml(HealthStatus.HEALTHY, 5_000, null, null)), 6_000);
        assertThat(merged.health()).isEqualTo(HealthStatus.HEALTHY);

        EffectiveHealth onlyUnknown = DeviceHealthMerger.merge(List.of(dra(HealthStatus.UNKNOWN, 5_000, "absent")), 6_000);
        assertThat(onlyUnknown.health()).isEqualTo(HealthStatus.UNKNOWN);
        assertThat(onlyUnknown.message()).isEqualTo("absent");
    }

    @Test
    void shouldBeUnknownNamingTheSilentSourceWhenAllAreStale() {
        EffectiveHealth merged = DeviceHealthMerger.merge(List.of(dra(HealthStatus.HEALTHY, 0, null),
                nvml(HealthStatus.UNHEALTHY, 0, "ECC", "XID-48")), 30_000);

        assertThat(merged.health()).isEqualTo(HealthStatus.UNKNOWN);
        assertThat(merged.reason()).isEqualTo(DeviceHealthMerger.REASON_SILENT);
        assertThat(merged.message()).contains("gpu.example.com (DRA)").contains("30 s");
        assertThat(merged.deadline()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void shouldNameEverySourceWhenSeveralAgree() {
        EffectiveHealth merged = DeviceHealthMerger.merge(List.of(dra(HealthStatus.UNHEALTHY, 1_000, "fell off the bus"),
                nvml(HealthStatus.UNHEALTHY, 2_000, "XID 79", "XID-79")), 3_000);

        assertThat(merged.message()).isEqualTo("nvml (NVML): XID 79; gpu.example.com (DRA): fell off the bus");
        assertThat(merged.reason()).isEqualTo("XID-79");
    }

    @Test
    void shouldSayNothingWasReportedForADeviceWithoutSources() {
        assertThat(DeviceHealthMerger.merge(List.of(), 0).reason()).isEqualTo(DeviceHealthMerger.REASON_NEVER_REPORTED);
    }
}
