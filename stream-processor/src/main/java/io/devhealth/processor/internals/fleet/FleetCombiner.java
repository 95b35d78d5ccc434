package io.devhealth.processor.internals.fleet;

import io.devhealth.processor.internals.stores.CommitHookKeyValueStore;
import io.devhealth.processor.internals.stores.TopologyNames;
import io.devhealth.processor.state.FleetCounts;
import io.devhealth.schema.avro.HealthTransition;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The first stage of the fleet counts: fans each health transition out to the dimensions it counts in
 * ({@link FleetDimensions}) and folds, per window and dimension value, the transitions of one flush
 * interval into one record for the fleet-by-dimension repartition, which {@link FleetCounter} adds up.
 *
 * <p>Why fold before the repartition: a fleet-wide event (a rack losing power, a driver roll-out) makes
 * a transition of every device at once, and sent one by one each transition cost four repartition
 * records and four fleet-stats updates, more than the transition itself. Folded, a burst costs about
 * one record per node, driver, product and reason per flush.
 *
 * <p>Exactly once, as the unfolded path: what was read and not yet sent lives in the {@code fleet-pending}
 * store (changelogged), written once per commit from the store's commit hook
 * ({@link CommitHookKeyValueStore}), so it is committed with the offsets of the transitions it
 * holds. A wall-clock punctuator sends everything pending and deletes it from the store in the same
 * transaction. After a crash the store comes back as of the last commit and the transitions read
 * since are read again; an aborted transaction ({@link #discardUnwritten}) drops the folded values in
 * memory, which are read again from the store.
 *
 * <p>Lateness: a transition whose window is already closed in this task's stream time
 * ({@link FleetWindows}) is counted as late here and not folded, so that a late transition cannot
 * slip into the counts inside a record that also carries timely ones. What is sent goes in the order
 * its windows were first written, each record with the time of its latest transition.
 */
public final class FleetCombiner implements Processor<String, HealthTransition, String, FleetCounts>, CommitHookKeyValueStore.Owner {

    private static final Logger LOGGER = LoggerFactory.getLogger(FleetCombiner.class);

    private final FleetWindows windows;
    private final Duration flushInterval;
    private final Counter late;
    private final Map<String, Pending> pending = new LinkedHashMap<>();
    private ProcessorContext<String, FleetCounts> context;
    private KeyValueStore<String, PendingFleetCounts> store;
    private boolean loaded;

    /** One window and dimension value's transitions since the last flush. */
    private static final class Pending {
        private final String dimensionKey;
        private FleetCounts counts;
        private long latestMs;
        /** Changed since the store last had it. */
        private boolean dirty;
        /** In the store: deleted from it when sent. */
        private boolean stored;

        private Pending(String dimensionKey, FleetCounts counts, long latestMs) {
            this.dimensionKey = dimensionKey;
            this.counts = counts;
            this.latestMs = latestMs;
        }
    }

    public FleetCombiner(FleetWindows windows, Duration flushInterval, MeterRegistry meters) {
        this.windows = windows;
        this.flushInterval = flushInterval;
        this.late = FleetCounter.lateCounter(meters);
    }

    @Override
    public void init(ProcessorContext<String, FleetCounts> context) {
        this.context = context;
        this.store = context.getStateStore(TopologyNames.FLEET_PENDING_STORE);
        CommitHookKeyValueStore.attach(store, this);
        loaded = false;
        context.schedule(flushInterval, PunctuationType.WALL_CLOCK_TIME, now -> flush());
    }

    @Override
    public void process(Record<String, HealthTransition> record) {
        HealthTransition transition = record.value();
        if (transition == null || record.timestamp() < 0) {
            return;
        }
        load();
        long at = record.timestamp();
        long windowStart = windows.start(at);
        String[] keys = FleetDimensions.keys(transition, record.headers());
        if (windows.closed(windowStart, Math.max(context.currentStreamTimeMs(), at))) {
            late.increment(keys.length);
            LOGGER.debug("transition too late for its fleet window node={} at={} streamTime={}",
                    transition.getNode(), at, context.currentStreamTimeMs());
            return;
        }
        FleetCounts one = FleetCounts.empty().add(transition);
        for (String key : keys) {
            String pendingKey = FleetWindowKeys.key(windowStart, key);
            Pending entry = pending.get(pendingKey);
            if (entry == null) {
                pending.put(pendingKey, entry = new Pending(key, one, at));
            } else {
                entry.counts = entry.counts.plus(one);
                entry.latestMs = Math.max(entry.latestMs, at);
            }
            entry.dirty = true;
        }
    }

    /** Sends everything pending on and deletes it from the store, in the transaction of the next commit. */
    private void flush() {
        load();
        for (Iterator<Map.Entry<String, Pending>> it = pending.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Pending> next = it.next();
            Pending entry = next.getValue();
            context.forward(new Record<>(entry.dimensionKey, entry.counts, entry.latestMs));
            if (entry.stored) {
                store.delete(next.getKey());
            }
            it.remove();
        }
    }

    @Override
    public void writeBeforeCommit() {
        for (Map.Entry<String, Pending> next : pending.entrySet()) {
            Pending entry = next.getValue();
            if (entry.dirty) {
                store.put(next.getKey(), new PendingFleetCounts(entry.counts, entry.latestMs));
                entry.dirty = false;
                entry.stored = true;
            }
        }
    }

    @Override
    public void discardUnwritten() {
        pending.clear();
        loaded = false;
    }

    /** Reads what the store holds, once after each (re)start or aborted transaction. */
    private void load() {
        if (loaded) {
            return;
        }
        pending.clear();
        try (KeyValueIterator<String, PendingFleetCounts> all = store.all()) {
            all.forEachRemaining(e -> {
                Pending entry = new Pending(FleetWindowKeys.dimensionKey(e.key), e.value.counts(), e.value.latestMs());
                entry.stored = true;
                pending.put(e.key, entry);
            });
        }
        loaded = true;
        if (!pending.isEmpty()) {
            LOGGER.info("fleet counts pending from before the restart windows={}", pending.size());
        }
    }
}
