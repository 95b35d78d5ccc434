package io.devhealth.processor.internals;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.processor.internals.proto.PendingRefreshValue;
import io.devhealth.processor.internals.proto.SourceRefresh;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.SourceKind;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class PendingRefreshTest {

    static Object[][] refreshes() {
        Map<String, Long> two = new LinkedHashMap<>();
        two.put("DRA:gpu.nvidia.com", 1_764_410_400_123L);
        two.put("NVML:nvml", 1_764_410_401_000L);
        return new Object[][] {
                {"node-a/gpu.nvidia.com/node-a/gpu-0", 1_764_410_430_123L, Map.of("DRA:gpu.nvidia.com", 1_764_410_400_123L)},
                {"node-a/gpu.nvidia.com/node-a/gpu-0", 1_764_410_430_123L, two},
                {"node-ä/gpu.nvidia.com/node-ä/gpu-0", Long.MAX_VALUE, Map.of("DRA:gpü", 1L)},
                {"node-a/uuid:GPU-1", 0L, Map.of("", 0L)},
                {"", -5L, Map.of()},
        };
    }

    @ParameterizedTest
    @MethodSource("refreshes")
    void shouldEncodeExactlyAsTheGeneratedMessage(String device, long deadline, Map<String, Long> refreshedAt) throws Exception {
        PendingRefresh refresh = new PendingRefresh(device, deadline, refreshedAt);
        PendingRefreshValue.Builder expected = PendingRefreshValue.newBuilder().setDevice(device).setDeadline(deadline);
        refresh.refreshedAt().forEach((source, at) -> expected.addSources(SourceRefresh.newBuilder().setSource(source).setRefreshedAt(at)));

        assertThat(refresh.encoded()).isEqualTo(expected.build().toByteArray());
        assertThat(PendingRefreshValue.parseFrom(refresh.encoded())).isEqualTo(expected.build());
    }

    @org.junit.jupiter.api.Test
    void shouldEncodeItsLatestRefreshAfterAKeepAliveMovedItInPlace() throws Exception {
        PendingRefresh refresh = new PendingRefresh("n/gpu-0", 31_000L, "DRA:gpu.nvidia.com", 1_000L);
        byte[] before = refresh.encoded();

        refresh.refresh(0, 16_000L, 46_000L);

        assertThat(refresh.encoded()).isNotEqualTo(before).isEqualTo(PendingRefreshValue.newBuilder().setDevice("n/gpu-0").setDeadline(46_000L)
                .addSources(SourceRefresh.newBuilder().setSource("DRA:gpu.nvidia.com").setRefreshedAt(16_000L)).build().toByteArray());
        assertThat(refresh).isEqualTo(new PendingRefresh("n/gpu-0", 46_000L, Map.of("DRA:gpu.nvidia.com", 16_000L)));
    }

    @org.junit.jupiter.api.Test
    void shouldTakeADeviceStatesRefreshTimesOnlyWhenItHasTheSameSources() {
        SourceReport dra = new SourceReport(SourceKind.DRA, "gpu.nvidia.com", HealthStatus.HEALTHY, null, null, 1_000L, 9_000L, 30_000L);
        SourceReport nvml = new SourceReport(SourceKind.NVML, "nvml", HealthStatus.HEALTHY, null, null, 1_000L, 8_000L, 30_000L);
        DeviceState both = new DeviceState("c", "n", "gpu.nvidia.com", "n", "gpu-0", null, Map.of(dra.key(), dra, nvml.key(), nvml),
                HealthStatus.HEALTHY, null, null, SourceKind.DRA, 1_000L, 38_000L);
        PendingRefresh refresh = new PendingRefresh("n/gpu-0", 31_000L, Map.of(dra.key(), 1_000L, nvml.key(), 1_000L));

        assertThat(refresh.refresh(both)).isTrue();
        assertThat(refresh).isEqualTo(PendingRefresh.of("n/gpu-0", both));
        DeviceState one = new DeviceState("c", "n", "gpu.nvidia.com", "n", "gpu-0", null, Map.of(dra.key(), dra), HealthStatus.HEALTHY,
                null, null, SourceKind.DRA, 1_000L, 39_000L);
        assertThat(refresh.refresh(one)).as("a source fewer").isFalse();
        assertThat(refresh).as("left as it was").isEqualTo(PendingRefresh.of("n/gpu-0", both));
    }
}
