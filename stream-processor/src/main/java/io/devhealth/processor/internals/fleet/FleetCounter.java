package io.devhealth.processor.internals.fleet;

import io.devhealth.processor.internals.stores.TopologyNames;
import io.devhealth.processor.state.FleetCounts;
import io.devhealth.schema.avro.FleetStats;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Adds up, per fleet dimension value, the transition counts {@link FleetCombiner} sends, in tumbling
 * windows of the transitions' own time, in the time-first {@code fleet-stats} store
 * ({@link FleetWindowKeys}), and emits every updated window to the fleet-stats topic (key
 * {@code DIMENSION:value@windowStart}).
 *
 * <p>Tumbling-window semantics as Kafka Streams' own ({@link FleetWindows}): counts for a window
 * already closed in this task's stream time are dropped (counted in {@code devhealth.processor.fleet.late}),
 * and windows older than the retention are deleted by a punctuator on stream time.
 */
public final class FleetCounter implements Processor<String, FleetCounts, String, FleetStats> {

    private static final Logger LOGGER = LoggerFactory.getLogger(FleetCounter.class);

    private final FleetWindows windows;
    private final long retentionMs;
    private final Counter late;
    private ProcessorContext<String, FleetStats> context;
    private KeyValueStore<String, FleetCounts> store;

    public FleetCounter(FleetWindows windows, Duration retention, MeterRegistry meters) {
        this.windows = windows;
        this.retentionMs = retention.toMillis();
        this.late = lateCounter(meters);
    }

    /** The one counter of transitions too late for their window, whichever stage found them late. */
    static Counter lateCounter(MeterRegistry meters) {
        return Counter.builder("devhealth.processor.fleet.late")
                .description("Transitions too late for their fleet-stats window (older than the grace) and not counted, one per dimension")
                .register(meters);
    }

    @Override
    public void init(ProcessorContext<String, FleetStats> context) {
        this.context = context;
        this.store = context.getStateStore(TopologyNames.FLEET_STATS_STORE);
        // Stream time: retention follows the transitions' time, as window stores' does, not the wall clock.
        context.schedule(Duration.ofMillis(Math.max(1_000L, Math.min(windows.sizeMs(), 60_000L))), PunctuationType.STREAM_TIME,
                this::dropExpiredWindows);
    }

    @Override
    public void process(Record<String, FleetCounts> record) {
        if (record.value() == null || record.key() == null || record.timestamp() < 0) {
            return;
        }
        long at = record.timestamp();
        long windowStart = windows.start(at);
        // The task's stream time, which Kafka Streams keeps with the committed offsets across restarts.
        long observedStreamTime = Math.max(context.currentStreamTimeMs(), at);
        if (windows.closed(windowStart, observedStreamTime)) {
            late.increment(record.value().total());
            LOGGER.debug("transitions too late for their fleet window key={} at={} streamTime={}", record.key(), at, observedStreamTime);
            return;
        }
        String key = FleetWindowKeys.key(windowStart, record.key());
        FleetCounts previous = store.get(key);
        FleetCounts next = previous == null ? record.value() : previous.plus(record.value());
        store.put(key, next);
        long windowEnd = windowStart + windows.sizeMs();
        context.forward(new Record<>(record.key() + "@" + Instant.ofEpochMilli(windowStart),
                stats(next, record.key(), Instant.ofEpochMilli(windowStart), Instant.ofEpochMilli(windowEnd)),
                record.timestamp()));
    }

    private void dropExpiredWindows(long streamTime) {
        long oldestKept = streamTime - retentionMs;
        if (oldestKept <= 0) {
            return;
        }
        List<String> expired = new ArrayList<>();
        try (KeyValueIterator<String, FleetCounts> old = store.range(FleetWindowKeys.from(0), FleetWindowKeys.from(oldestKept))) {
            old.forEachRemaining((KeyValue<String, FleetCounts> entry) -> expired.add(entry.key));
        }
        expired.forEach(store::delete);
        if (!expired.isEmpty()) {
            LOGGER.debug("fleet windows past retention deleted count={}", expired.size());
        }
    }

    /** The fleet-stats record of a window's {@code counts}; {@code dimensionKey} is {@link FleetDimensions#key}. */
    private static FleetStats stats(FleetCounts counts, String dimensionKey, Instant windowStart, Instant windowEnd) {
        return FleetStats.newBuilder()
                .setCluster(counts.cluster() == null ? "" : counts.cluster())
                .setWindowStart(windowStart)
                .setWindowEnd(windowEnd)
                .setDimension(FleetDimensions.dimension(dimensionKey))
                .setKey(FleetDimensions.value(dimensionKey))
                .setToUnhealthy(counts.toUnhealthy())
                .setToUnknown(counts.toUnknown())
                .setToHealthy(counts.toHealthy())
                .build();
    }
}
