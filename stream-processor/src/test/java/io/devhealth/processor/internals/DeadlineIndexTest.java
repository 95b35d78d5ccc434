package io.devhealth.processor.internals;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DeadlineIndexTest {

    private final DeadlineIndex index = new DeadlineIndex();

    @Test
    void shouldGiveTheDueDevicesOfANodeEarliestFirst() {
        index.update("n1", "n1/d/p/b", 200);
        index.update("n1", "n1/d/p/a", 100);
        index.update("n1", "n1/d/p/c", 300);
        index.update("n2", "n2/d/p/a", 50);

        assertThat(index.earliest("n1")).isEqualTo(100);
        assertThat(index.due("n1", 200)).containsExactly("n1/d/p/a", "n1/d/p/b");
        assertThat(index.due("n1", 99)).isEmpty();
        assertThat(index.due("n2", 1_000)).containsExactly("n2/d/p/a");
    }

    @Test
    void shouldMoveADeviceWhenItsDeadlineMovesAndForgetItWhenItCannotExpire() {
        index.update("n1", "n1/d/p/a", 100);
        index.update("n1", "n1/d/p/b", 150);
        index.update("n1", "n1/d/p/a", 400);
        assertThat(index.earliest("n1")).as("a keep-alive moved a's deadline past b's").isEqualTo(150);

        index.update("n1", "n1/d/p/b", Long.MAX_VALUE);
        assertThat(index.due("n1", 399)).isEmpty();
        index.remove("n1", "n1/d/p/a");
        assertThat(index.earliest("n1")).isEqualTo(Long.MAX_VALUE);
        assertThat(index.due("n1", Long.MAX_VALUE - 1)).isEmpty();
    }

    @Test
    void shouldFollowKeepAlivesThatMoveEveryDeadlineOfABigNode() {
        int devices = 70; // past the initial capacity, and past a node's usual 8
        for (int d = 0; d < devices; d++) {
            index.update("n1", "n1/d/p/" + d, 1_000 + d);
        }
        index.update("n2", "n2/d/p/a", 500);
        assertThat(index.earliest("n1")).isEqualTo(1_000);
        assertThat(index.nodesDue(node -> 999)).containsExactly("n2");

        // A round of keep-alives: each device's deadline moves 30 s on, the earliest one first.
        for (int d = 0; d < devices; d++) {
            index.update("n1", "n1/d/p/" + d, 31_000 + d);
            assertThat(index.earliest("n1")).isEqualTo(d + 1 < devices ? 1_000 + d + 1 : 31_000);
        }
        assertThat(index.nodesDue(node -> 30_999)).containsExactly("n2");
        assertThat(index.due("n1", 31_002)).containsExactly("n1/d/p/0", "n1/d/p/1", "n1/d/p/2");

        for (int d = 0; d < devices; d += 2) {
            index.remove("n1", "n1/d/p/" + d);
        }
        assertThat(index.earliest("n1")).isEqualTo(31_001);
        assertThat(index.due("n1", Long.MAX_VALUE - 1)).hasSize(devices / 2).first().isEqualTo("n1/d/p/1");
    }

    @Test
    void shouldOrderDevicesDueAtTheSameTimeByName() {
        index.update("n1", "n1/d/p/c", 100);
        index.update("n1", "n1/d/p/a", 100);
        index.update("n1", "n1/d/p/b", 90);
        assertThat(index.due("n1", 100)).containsExactly("n1/d/p/b", "n1/d/p/a", "n1/d/p/c");
    }

    @Test
    void shouldForgetEverythingWhenCleared() {
        index.update("n1", "n1/d/p/a", 100);
        index.clear();
        assertThat(index.earliest("n1")).isEqualTo(Long.MAX_VALUE);
    }
}
