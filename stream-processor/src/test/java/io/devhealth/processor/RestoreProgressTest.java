package io.devhealth.processor;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.StandbyUpdateListener.SuspendReason;
import org.apache.kafka.streams.processor.TaskId;
import org.junit.jupiter.api.Test;

class RestoreProgressTest {

    private static final TopicPartition DEVICES_0 = new TopicPartition("app-device-state-changelog", 0);
    private static final TopicPartition NODES_0 = new TopicPartition("app-node-state-changelog", 0);

    private final MeterRegistry registry = new SimpleMeterRegistry();
    private final RestoreProgress progress = new RestoreProgress(registry);

    private double gauge(String name) {
        return registry.get(name).gauge().value();
    }

    @Test
    void shouldCountWhatIsLeftToRestoreUntilEachStorePartitionEnds() {
        progress.onRestoreStart(DEVICES_0, "device-state", 100, 1_100);
        progress.onRestoreStart(NODES_0, "node-state", 0, 50);
        assertThat(gauge(RestoreProgress.RESTORE_REMAINING)).isEqualTo(1_050);
        assertThat(gauge(RestoreProgress.RESTORE_PARTITIONS)).isEqualTo(2);

        progress.onBatchRestored(DEVICES_0, "device-state", 599, 500);
        assertThat(gauge(RestoreProgress.RESTORE_REMAINING)).isEqualTo(550);

        progress.onRestoreEnd(NODES_0, "node-state", 50);
        assertThat(gauge(RestoreProgress.RESTORE_REMAINING)).isEqualTo(500);
        assertThat(gauge(RestoreProgress.RESTORE_PARTITIONS)).isEqualTo(1);
        assertThat(registry.get(RestoreProgress.RESTORE_TIME).timer().count()).isEqualTo(1);
        assertThat(registry.get(RestoreProgress.RESTORED).counter().count()).isEqualTo(500);
    }

    @Test
    void shouldForgetARestoreThatMovedAwayBeforeItEnded() {
        progress.onRestoreStart(DEVICES_0, "device-state", 0, 1_000);
        progress.onRestoreSuspended(DEVICES_0, "device-state", 10);

        assertThat(gauge(RestoreProgress.RESTORE_REMAINING)).isZero();
        assertThat(gauge(RestoreProgress.RESTORE_PARTITIONS)).isZero();
        assertThat(registry.get(RestoreProgress.RESTORE_TIME).timer().count()).as("not a finished restore").isZero();
    }

    @Test
    void shouldNotLetABatchMoveAnotherStoresProgressNorGoBelowZero() {
        progress.onRestoreStart(DEVICES_0, "device-state", 0, 100);
        progress.onBatchRestored(NODES_0, "node-state", 99, 100);
        assertThat(gauge(RestoreProgress.RESTORE_REMAINING)).isEqualTo(100);

        // End offsets include transaction markers: the last batch may end past the end seen at the start.
        progress.onBatchRestored(DEVICES_0, "device-state", 150, 100);
        assertThat(gauge(RestoreProgress.RESTORE_REMAINING)).isZero();
    }

    @Test
    void shouldSumTheStandbyCopiesLagUntilTheyArePromotedOrMoved() {
        TaskId task = new TaskId(0, 0);
        progress.onUpdateStart(DEVICES_0, "device-state", 0);
        progress.onUpdateStart(NODES_0, "node-state", 0);
        assertThat(gauge(RestoreProgress.STANDBY_LAG)).as("not known before a batch").isZero();

        progress.onBatchLoaded(DEVICES_0, "device-state", task, 899, 900, 1_000);
        progress.onBatchLoaded(NODES_0, "node-state", task, 49, 50, 60);
        assertThat(gauge(RestoreProgress.STANDBY_LAG)).isEqualTo(100 + 10);

        progress.onUpdateSuspended(DEVICES_0, "device-state", 900, 1_000, SuspendReason.PROMOTED);
        assertThat(gauge(RestoreProgress.STANDBY_LAG)).isEqualTo(10);
        progress.onUpdateSuspended(NODES_0, "node-state", 50, 60, SuspendReason.MIGRATED);
        assertThat(gauge(RestoreProgress.STANDBY_LAG)).isZero();
    }
}
