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
    void shouldKeepAnEarlierDeadlineAsALowerBoundWhenExtended() {
        index.update("n1", "n1/d/p/a", 100);
        index.update("n2", "n2/d/p/a", 500);
        index.extend("n1", "n1/d/p/a", 400);
        assertThat(index.earliest("n1")).as("not re-sorted for a later deadline").isEqualTo(100);
        assertThat(index.nodesDue(node -> 150)).containsExactly("n1");

        index.extend("n1", "n1/d/p/a", 50);
        assertThat(index.earliest("n1")).as("an earlier deadline replaces it").isEqualTo(50);
        index.extend("n1", "n1/d/p/new", 300);
        assertThat(index.due("n1", 300)).containsExactly("n1/d/p/a", "n1/d/p/new");
        assertThat(index.nodesDue(node -> 1_000)).containsExactlyInAnyOrder("n1", "n2");
    }

    @Test
    void shouldForgetEverythingWhenCleared() {
        index.update("n1", "n1/d/p/a", 100);
        index.clear();
        assertThat(index.earliest("n1")).isEqualTo(Long.MAX_VALUE);
    }
}
