package io.devhealth.query.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class RestoredCopiesTest {

    private static final String DEVICES = "device-state";
    private static final String NODES = "node-state";

    private final RestoredCopies copies = new RestoredCopies();

    /** One observation of every copy kept here, by store and partition. */
    private void observe(Map<String, Map<Integer, CopyLag>> lags) {
        copies.observe(lags);
    }

    private static CopyLag at(long position, long end) {
        return new CopyLag(position, end);
    }

    @Test
    void shouldNotCountACopyFewRecordsShortOfItsEndAsRestoredBeforeItReachedTheEnd() {
        observe(Map.of(DEVICES, Map.of(0, at(0, 3_000))));
        assertThat(copies.restored(DEVICES, 0)).as("a new copy, 3,000 records short: fewer than any record bound").isFalse();

        observe(Map.of(DEVICES, Map.of(0, at(2_990, 3_040))));
        assertThat(copies.restored(DEVICES, 0)).as("short of the end it had when first seen").isFalse();

        observe(Map.of(DEVICES, Map.of(0, at(3_000, 3_200))));
        assertThat(copies.restored(DEVICES, 0)).as("past the end it had when first seen, behind the end now").isTrue();
        assertThat(copies.target(DEVICES, 0)).isEqualTo(3_000);
    }

    @Test
    void shouldCountACopyAtItsEndOrOneMarkerShortAsRestoredAtFirstSight() {
        observe(Map.of(DEVICES, Map.of(0, at(499, 500), 1, at(500, 500), 2, at(498, 500))));

        assertThat(copies.restored(DEVICES, 0)).as("one short: the commit marker").isTrue();
        assertThat(copies.restored(DEVICES, 1)).isTrue();
        assertThat(copies.restored(DEVICES, 2)).as("two short").isFalse();
    }

    @Test
    void shouldStayRestoredWhileItLagsBehindNewWrites() {
        observe(Map.of(DEVICES, Map.of(0, at(500, 500))));
        observe(Map.of(DEVICES, Map.of(0, at(520, 900))));

        assertThat(copies.restored(DEVICES, 0)).isTrue();
    }

    @Test
    void shouldStartOverWhenItsPositionGoesBack() {
        observe(Map.of(DEVICES, Map.of(0, at(500, 500))));
        observe(Map.of(DEVICES, Map.of(0, at(10, 600))));

        assertThat(copies.restored(DEVICES, 0)).as("wiped and restoring anew").isFalse();
        assertThat(copies.target(DEVICES, 0)).isEqualTo(600);
    }

    @Test
    void shouldStartOverWhenACopyWasMissingFromAnObservation() {
        observe(Map.of(DEVICES, Map.of(0, at(500, 500)), NODES, Map.of(0, at(80, 80))));
        observe(Map.of(NODES, Map.of(0, at(80, 80))));
        assertThat(copies.restored(DEVICES, 0)).as("moved away").isFalse();
        assertThat(copies.target(DEVICES, 0)).isEqualTo(-1);

        observe(Map.of(DEVICES, Map.of(0, at(500, 2_000)), NODES, Map.of(0, at(80, 80))));
        assertThat(copies.restored(DEVICES, 0)).as("back, from its checkpoint, short of the end").isFalse();
        assertThat(copies.restored(NODES, 0)).as("the other store's copy, seen throughout").isTrue();
    }

    @Test
    void shouldKeepEachStoreAndPartitionApart() {
        observe(Map.of(DEVICES, Map.of(0, at(100, 100), 1, at(0, 100)), NODES, Map.of(1, at(100, 100))));

        assertThat(copies.restored(DEVICES, 0)).isTrue();
        assertThat(copies.restored(DEVICES, 1)).isFalse();
        assertThat(copies.restored(NODES, 1)).isTrue();
        assertThat(copies.restored(NODES, 0)).as("never seen").isFalse();
    }
}
