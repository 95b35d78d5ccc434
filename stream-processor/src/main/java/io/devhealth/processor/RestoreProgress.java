package io.devhealth.processor;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.StandbyUpdateListener;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.processor.TaskId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How far this instance is from answering for the state it was given: while it restores a store
 * partition from its changelog (after a start on an empty or stale state directory, or when a
 * partition moves here without a standby), that partition's nodes are unanswerable, and its silence
 * clock has not started. Kafka Streams reports restores and standby updates to listeners; this one
 * keeps them as gauges an operator can watch per instance (the dashboard's restore and standby
 * panels):
 * <ul>
 * <li>{@value #RESTORE_REMAINING}: changelog records left to restore, summed over the store
 * partitions restoring now (from each changelog's end offset when the restore started: transaction
 * markers make it an upper bound);</li>
 * <li>{@value #RESTORE_PARTITIONS}: store partitions restoring now; {@value #RESTORED} records restored
 * in all; {@value #RESTORE_TIME} how long each store partition took;</li>
 * <li>{@value #STANDBY_LAG}: records the standby copies here are behind their changelogs' end, summed,
 * as of each copy's last batch (a copy that has loaded none counts 0): what a takeover by this instance
 * would restore first.</li>
 * </ul>
 * The callbacks come from stream threads and the state updater thread at once.
 */
public final class RestoreProgress implements StateRestoreListener, StandbyUpdateListener {

    public static final String RESTORE_REMAINING = "devhealth.processor.restore.remaining.records";
    public static final String RESTORE_PARTITIONS = "devhealth.processor.restore.partitions";
    public static final String RESTORED = "devhealth.processor.restore.records";
    public static final String RESTORE_TIME = "devhealth.processor.restore.duration";
    public static final String STANDBY_LAG = "devhealth.processor.standby.lag.records";

    private static final Logger LOGGER = LoggerFactory.getLogger(RestoreProgress.class);

    private record StorePartition(TopicPartition changelog, String store) {}

    /** @param end the changelog's end offset when the restore started; @param position the next offset to restore */
    private record Restoring(long end, long position, long startedNanos) {
        long remaining() {
            return Math.max(0, end - position);
        }
    }

    private final Map<StorePartition, Restoring> restoring = new ConcurrentHashMap<>();
    private final Map<StorePartition, Long> standbyLag = new ConcurrentHashMap<>();
    private final Counter restored;
    private final Timer restoreTime;

    RestoreProgress(MeterRegistry registry) {
        Gauge.builder(RESTORE_REMAINING, this, RestoreProgress::remaining)
                .description("Changelog records left to restore on this instance, over the store partitions restoring now")
                .register(registry);
        Gauge.builder(RESTORE_PARTITIONS, restoring, Map::size)
                .description("Store partitions this instance is restoring from their changelogs now")
                .register(registry);
        Gauge.builder(STANDBY_LAG, this, RestoreProgress::standbyLag)
                .description("Records this instance's standby copies are behind their changelogs, summed")
                .register(registry);
        this.restored = Counter.builder(RESTORED).description("Changelog records restored by this instance").register(registry);
        this.restoreTime = Timer.builder(RESTORE_TIME).description("Time to restore one store partition from its changelog")
                .register(registry);
    }

    long remaining() {
        return restoring.values().stream().mapToLong(Restoring::remaining).sum();
    }

    long standbyLag() {
        return standbyLag.values().stream().mapToLong(Long::longValue).sum();
    }

    @Override
    public void onRestoreStart(TopicPartition changelog, String store, long startingOffset, long endingOffset) {
        restoring.put(new StorePartition(changelog, store), new Restoring(endingOffset, startingOffset, System.nanoTime()));
        LOGGER.info("restore started store={} changelog={} records={}", store, changelog, Math.max(0, endingOffset - startingOffset));
    }

    @Override
    public void onBatchRestored(TopicPartition changelog, String store, long batchEndOffset, long numRestored) {
        restored.increment(numRestored);
        restoring.computeIfPresent(new StorePartition(changelog, store),
                (key, now) -> new Restoring(now.end(), Math.max(now.position(), batchEndOffset + 1), now.startedNanos()));
    }

    @Override
    public void onRestoreEnd(TopicPartition changelog, String store, long totalRestored) {
        Restoring done = restoring.remove(new StorePartition(changelog, store));
        Duration took = done == null ? Duration.ZERO : Duration.ofNanos(System.nanoTime() - done.startedNanos());
        restoreTime.record(took);
        LOGGER.info("restore ended store={} changelog={} records={} ms={}", store, changelog, totalRestored, took.toMillis());
    }

    /** The partition moved away (or the instance is closing) before its restore ended: it is no longer this instance's to restore. */
    @Override
    public void onRestoreSuspended(TopicPartition changelog, String store, long totalRestored) {
        restoring.remove(new StorePartition(changelog, store));
        LOGGER.info("restore suspended store={} changelog={} records={}", store, changelog, totalRestored);
    }

    /** The lag is known with the copy's first batch (Kafka Streams says nothing of the changelog's end here). */
    @Override
    public void onUpdateStart(TopicPartition changelog, String store, long startingOffset) {
        LOGGER.debug("standby update started store={} changelog={} offset={}", store, changelog, startingOffset);
    }

    @Override
    public void onBatchLoaded(TopicPartition changelog, String store, TaskId task, long batchEndOffset, long batchSize,
            long currentEndOffset) {
        standbyLag.put(new StorePartition(changelog, store), Math.max(0, currentEndOffset - batchEndOffset - 1));
    }

    /** Promoted to active (its restore, if any, is counted above), moved away, or closed: no longer a standby here. */
    @Override
    public void onUpdateSuspended(TopicPartition changelog, String store, long storeOffset, long currentEndOffset, SuspendReason reason) {
        standbyLag.remove(new StorePartition(changelog, store));
        LOGGER.info("standby update suspended store={} changelog={} reason={} behind={}", store, changelog, reason,
                Math.max(0, currentEndOffset - storeOffset));
    }
}
