package io.devhealth.processor.query;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.processor.internals.DeviceState;
import io.devhealth.processor.internals.Flaps;
import io.devhealth.processor.internals.SourceReport;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.SourceKind;
import java.util.Map;
import org.junit.jupiter.api.Test;

class QueryViewsTest {

    @Test
    void shouldShowWhatAFlappingSourceIsHeldAtAndHowOftenItChanged() {
        SourceReport held = new SourceReport(SourceKind.NVML, "nvml", HealthStatus.HEALTHY, null, null, 5_000L, 6_000L, 30_000L,
                new Flaps.Held(4_000L, HealthStatus.UNHEALTHY, "flapping: held", 7, 9_000L));
        SourceReport counting = new SourceReport(SourceKind.DRA, "gpu.nvidia.com", HealthStatus.HEALTHY, null, null, 5_000L,
                5_000L, 30_000L, new Flaps.Counting(java.util.List.of(1_000L, 3_000L)));
        DeviceState state = new DeviceState("prod", "node-1", "gpu.nvidia.com", "node-1", "gpu-0", null,
                Map.of(held.key(), held, counting.key(), counting), HealthStatus.UNHEALTHY, "flapping: held", Flaps.REASON_FLAPPING,
                SourceKind.NVML, 4_000L, 9_000L);

        QueryViews.NodeDevice device = QueryViews.nodeDevice(state);

        assertThat(device.reason()).isEqualTo("Flapping");
        assertThat(device.sources()).filteredOn(s -> s.kind().equals("NVML")).singleElement()
                .extracting(QueryViews.Source::damping)
                .isEqualTo(new QueryViews.Damping("1970-01-01T00:00:04Z", "UNHEALTHY", 7, "1970-01-01T00:00:09Z"));
        assertThat(device.sources()).filteredOn(s -> s.kind().equals("DRA")).singleElement()
                .extracting(QueryViews.Source::damping).as("counting changes is not a hold").isNull();
    }
}
