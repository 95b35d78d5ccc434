package io.devhealth.processor.internals;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RefreshTableTest {

    private static PendingRefresh refresh(String device, long deadline) {
        return new PendingRefresh(device, deadline, Map.of("DRA:gpu.example.com", deadline - 30_000L));
    }

    @Test
    void shouldBehaveLikeAMapUnderReplaceAddAndRemove() {
        Map<String, PendingRefresh> expected = new HashMap<>();
        RefreshTable table = RefreshTable.EMPTY;
        for (int round = 0; round < 3; round++) {
            for (int d = 0; d < 8; d++) {
                PendingRefresh next = refresh("n/gpu-" + d, 100_000L * round + d);
                table = table.with(next);
                expected.put(next.device(), next);
                assertThat(table).isEqualTo(expected);
            }
        }
        table = table.without("n/gpu-3").without("n/gpu-0").without("n/gpu-7").without("n/absent");
        expected.keySet().removeAll(java.util.List.of("n/gpu-3", "n/gpu-0", "n/gpu-7"));
        assertThat(table).isEqualTo(expected).hasSize(5);
        assertThat(expected).isEqualTo(table);
        assertThat(table.hashCode()).isEqualTo(expected.hashCode());
        assertThat(table.get("n/gpu-4")).isSameAs(expected.get("n/gpu-4"));
        assertThat(table.get("n/gpu-3")).isNull();
        assertThat(table.containsKey("n/gpu-5")).isTrue();
        assertThat(table.values()).containsExactlyInAnyOrderElementsOf(expected.values());
    }

    @Test
    void shouldLeaveTheTableItWasMadeFromUnchanged() {
        RefreshTable one = RefreshTable.EMPTY.with(refresh("n/gpu-0", 1L));
        RefreshTable two = one.with(refresh("n/gpu-0", 2L)).with(refresh("n/gpu-1", 3L));

        assertThat(one).hasSize(1);
        assertThat(one.get("n/gpu-0").deadline()).isEqualTo(1L);
        assertThat(two.without("n/gpu-0")).containsOnlyKeys("n/gpu-1");
        assertThat(two).containsOnlyKeys("n/gpu-0", "n/gpu-1");
    }

    @Test
    void shouldRefuseARefreshKeptUnderAnotherDevicesKey() {
        assertThatThrownBy(() -> RefreshTable.of(Map.of("n/gpu-1", refresh("n/gpu-0", 1L))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("n/gpu-0");
    }
}
