package io.devhealth.collector.nvml.internals;

import io.devhealth.collector.nvml.jna.NvmlEventType;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * Folds NVML events into one tally per (device, event type, XID): count, first and last time.
 *
 * <p>The event thread only calls {@link #record}; the scheduler {@link #drain}s the tallies. A storm
 * of 800,000 identical XIDs is therefore one map entry, not 800,000 reports, and costs the storming
 * device nothing beyond a counter increment per event. The number of distinct keys is capped (a
 * corrupt stream of distinct XIDs cannot exhaust memory): beyond it, events of new keys are counted
 * as dropped.
 */
public final class EventCoalescer {

    static final int MAX_KEYS = 4096;

    /** What one tally counts. {@code data} is the XID for XID events and 0 for the others. */
    public record EventKey(DeviceKey device, NvmlEventType type, long data) {}

    /** Occurrences of one key since the last drain. */
    public static final class Tally {
        private long count;
        private final Instant first;
        private Instant last;

        Tally(Instant at) {
            this.first = at;
            this.last = at;
        }

        public long count() {
            return count;
        }

        public Instant first() {
            return first;
        }

        public Instant last() {
            return last;
        }
    }

    private Map<EventKey, Tally> tallies = new HashMap<>();
    private long dropped;

    /** Counts one event; true when its key is new since the last drain (worth evaluating at once). */
    public synchronized boolean record(EventKey key, Instant at) {
        Tally tally = tallies.get(key);
        boolean fresh = tally == null;
        if (fresh) {
            if (tallies.size() >= MAX_KEYS) {
                dropped++;
                return false;
            }
            tally = new Tally(at);
            tallies.put(key, tally);
        }
        tally.count++;
        tally.last = at;
        return fresh;
    }

    /** The tallies since the last drain, and a fresh start. */
    public synchronized Map<EventKey, Tally> drain() {
        Map<EventKey, Tally> drained = tallies;
        tallies = new HashMap<>();
        return drained;
    }

    /** Events not counted because the key cap was reached, since start. */
    public synchronized long dropped() {
        return dropped;
    }
}
