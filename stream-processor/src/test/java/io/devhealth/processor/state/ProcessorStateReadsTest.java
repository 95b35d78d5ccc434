package io.devhealth.processor.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.processor.internals.rules.DeviceState;
import io.devhealth.processor.internals.rules.Flaps;
import io.devhealth.processor.internals.rules.SourceReport;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.SourceKind;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ProcessorStateReadsTest {

    @Test
    void shouldShowWhatAFlappingSourceIsHeldAtAndHowOftenItChanged() {
        SourceReport held = new SourceReport(SourceKind.NVML, "nvml", HealthStatus.HEALTHY, null, null, 5_000L, 6_000L, 30_000L,
                new Flaps.Held(4_000L, HealthStatus.UNHEALTHY, "flapping: held", 7, 9_000L));
        SourceReport counting = new SourceReport(SourceKind.DRA, "gpu.nvidia.com", HealthStatus.HEALTHY, null, null, 5_000L,
                5_000L, 30_000L, new Flaps.Counting(List.of(1_000L, 3_000L)));
        DeviceState state = new DeviceState("prod", "node-1", "gpu.nvidia.com", "node-1", "gpu-0", null,
                Map.of(held.key(), held, counting.key(), counting), HealthStatus.UNHEALTHY, "flapping: held", Flaps.REASON_FLAPPING,
                SourceKind.NVML, 4_000L, 9_000L);

        DeviceNow device = ProcessorStateReads.deviceNow(state);

        assertThat(device.reason()).isEqualTo("Flapping");
        assertThat(device.health()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(device.since()).isEqualTo(Instant.ofEpochMilli(4_000L));
        assertThat(device.sources()).extracting(DeviceNow.SourceNow::health).containsOnly(HealthStatus.HEALTHY);
        assertThat(device.sources()).filteredOn(s -> s.kind().equals("NVML")).singleElement()
                .extracting(DeviceNow.SourceNow::hold)
                .isEqualTo(new DeviceNow.Hold(Instant.ofEpochMilli(4_000L), HealthStatus.UNHEALTHY, 7, Instant.ofEpochMilli(9_000L)));
        assertThat(device.sources()).filteredOn(s -> s.kind().equals("DRA")).singleElement()
                .extracting(DeviceNow.SourceNow::hold).as("counting changes is not a hold").isNull();
    }

    @Test
    void shouldShowNoSinceForADeviceWhoseHealthNeverChanged() {
        DeviceState state = new DeviceState("prod", "node-1", "gpu.nvidia.com", "node-1", "gpu-0", "GPU-1", Map.of(),
                HealthStatus.UNKNOWN, null, null, SourceKind.DRA, 0L, Long.MAX_VALUE);

        assertThat(ProcessorStateReads.deviceNow(state).since()).isNull();
        assertThat(ProcessorStateReads.deviceNow(state).uuid()).isEqualTo("GPU-1");
    }
}
