package io.devhealth.processor.internals;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.processor.internals.proto.PendingRefreshValue;
import io.devhealth.processor.internals.proto.SourceRefresh;
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
}
