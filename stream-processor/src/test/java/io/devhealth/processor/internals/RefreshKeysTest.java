package io.devhealth.processor.internals;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class RefreshKeysTest {

    @Test
    void shouldShareWhatEachKeyHasInCommonWithThePreviousOne() throws Exception {
        RefreshKeys keys = new RefreshKeys();

        assertThat(keys.shared("n1/gpu.nvidia.com/n1/gpu-0")).isZero();
        assertThat(keys.shared("n1/gpu.nvidia.com/n1/gpu-1")).isEqualTo("n1/gpu.nvidia.com/n1/gpu-".length());
        assertThat(keys.shared("n1/uuid:GPU-1")).isEqualTo("n1/".length());
        assertThat(keys.shared("n1/uuid:GPU-1")).isEqualTo("n1/uuid:GPU-1".length());
        assertThat(RefreshKeys.device("n1/gpu.nvidia.com/n1/gpu-0", "n1/gpu.nvidia.com/n1/gpu-".length(), "1"))
                .isEqualTo("n1/gpu.nvidia.com/n1/gpu-1");
    }

    @Test
    void shouldNotSplitASurrogatePair() {
        RefreshKeys keys = new RefreshKeys();
        keys.shared("n1/pool-\uD83D\uDE00/gpu-0");

        int shared = keys.shared("n1/pool-\uD83D\uDE01/gpu-0");

        assertThat(shared).isEqualTo("n1/pool-".length());
    }

    @Test
    void shouldNumberSourcesInTheOrderOfFirstUse() throws Exception {
        RefreshKeys keys = new RefreshKeys();

        assertThat(List.of(keys.source("DRA:gpu.nvidia.com"), keys.source("NVML:nvml"), keys.source("DRA:gpu.nvidia.com")))
                .containsExactly(0, 1, 0);
        assertThat(keys.sources()).containsExactly("DRA:gpu.nvidia.com", "NVML:nvml");
        assertThat(RefreshKeys.source(keys.sources(), 1)).isEqualTo("NVML:nvml");
    }
}
