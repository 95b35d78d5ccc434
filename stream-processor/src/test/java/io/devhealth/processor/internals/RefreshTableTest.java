package io.devhealth.processor.internals;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RefreshTableTest {

    private static PendingRefresh refresh(String device, long deadline) {
        return new PendingRefresh(device, deadline, Map.of("DRA:gpu.example.com", deadline - 30_000L));
    }

    @Test
    void shouldBehaveLikeAMapUnderReplaceAddAndRemove() {
        Map<String, PendingRefresh> expected = new HashMap<>();
        RefreshTable table = new RefreshTable();
        for (int round = 0; round < 3; round++) {
            for (int d = 0; d < 20; d++) { // past the initial capacity
                PendingRefresh next = refresh("n/gpu-" + d, 100_000L * round + d);
                assertThat(table.put(next.device(), next)).isEqualTo(expected.put(next.device(), next));
                assertThat(table).isEqualTo(expected);
            }
        }
        for (String device : List.of("n/gpu-3", "n/gpu-0", "n/gpu-19", "n/absent")) {
            assertThat(table.remove(device)).isEqualTo(expected.remove(device));
        }
        assertThat(table).isEqualTo(expected).hasSize(17);
        assertThat(expected).isEqualTo(table);
        assertThat(table.hashCode()).isEqualTo(expected.hashCode());
        assertThat(table.get("n/gpu-4")).isSameAs(expected.get("n/gpu-4"));
        assertThat(table.get("n/gpu-3")).isNull();
        assertThat(table.containsKey("n/gpu-5")).isTrue();
        assertThat(table.values()).containsExactlyInAnyOrderElementsOf(expected.values());
    }

    @Test
    void shouldBeSharedByEveryStateOfItsNodeAndCopiedFromAnyOtherMap() {
        NodeState first = NodeState.empty("c");
        NodeState later = first.withReport(new NodeState.Watermark(1L, 1L), 5_000L).withSources(Map.of());
        first.refreshes().put("n/gpu-0", refresh("n/gpu-0", 1L));

        assertThat(later.refreshes()).as("one working table per node").isSameAs(first.refreshes()).containsOnlyKeys("n/gpu-0");
        assertThat(NodeState.empty("c").refreshes()).as("every node its own").isEmpty();
        Map<String, PendingRefresh> decoded = Map.of("n/gpu-1", refresh("n/gpu-1", 2L));
        assertThat(RefreshTable.of(decoded)).isEqualTo(decoded).isNotSameAs(decoded);
    }

    @Test
    void shouldRefuseARefreshKeptUnderAnotherDevicesKey() {
        assertThatThrownBy(() -> RefreshTable.of(Map.of("n/gpu-1", refresh("n/gpu-0", 1L))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("n/gpu-0");
    }
}
