package io.devhealth.processor.internals;

import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Estimates each node's current time, so that silence is judged on the node's clock and never on
 * the processor's: a processor that lags, restarts or pauses must not call a node silent that was not.
 *
 * <p>A node's time is what its own records say ({@code observedAt}, kept in {@link NodeState}), plus
 * the wall-clock time this processor has spent waiting for its next record while being able to
 * receive it. Three rules keep that wait honest:
 * <ul>
 *   <li>The wait counts from the last record of that node this instance processed, which a lagging
 *       processor replaying a backlog reaches at the pace of the backlog, not of the wall clock.</li>
 *   <li>After a start (restore, rebalance) nothing this instance did not witness counts: waits count
 *       from {@code start + grace}, giving the backlog time to be fetched.</li>
 *   <li>A gap between two ticks far longer than the tick interval means this processor was not
 *       running (GC pause, blocked thread, suspended host): waits count again from
 *       {@code now + grace}, as after a start.</li>
 * </ul>
 * Not thread-safe: one per processor instance, used from its stream thread only. Wall time is passed
 * in (Kafka Streams' cached system time), so tests drive it.
 */
public final class SilenceClock {

    private static final Logger LOGGER = LoggerFactory.getLogger(SilenceClock.class);

    private final long graceMs;
    private final long stallThresholdMs;
    /** Per node, the wall time of its latest record here: a mutable cell, as it moves on every record. */
    private final Map<String, long[]> lastRecordWall = new HashMap<>();
    private long countFrom = Long.MAX_VALUE;
    private long lastTick = Long.MIN_VALUE;

    public SilenceClock(long graceMs, long stallThresholdMs) {
        this.graceMs = graceMs;
        this.stallThresholdMs = stallThresholdMs;
    }

    /** This instance (re)starts at {@code wallNow}: silence before it is not known. */
    public void start(long wallNow) {
        lastRecordWall.clear();
        countFrom = wallNow + graceMs;
        lastTick = wallNow;
    }

    /**
     * A tick of the expiry punctuator at {@code wallNow}.
     *
     * @return false when this processor was stalled since the previous tick (nothing may expire now)
     */
    public boolean tick(long wallNow) {
        long gap = wallNow - lastTick;
        lastTick = wallNow;
        if (gap > stallThresholdMs) {
            countFrom = Math.max(countFrom, wallNow + graceMs);
            LOGGER.warn("processor was not running, silence counted anew gapMs={} graceMs={}", gap, graceMs);
            return false;
        }
        return true;
    }

    /** A record of {@code node} was processed at {@code wallNow}. */
    public void recordSeen(String node, long wallNow) {
        long[] seen = lastRecordWall.get(node);
        if (seen == null) {
            lastRecordWall.put(node, new long[] {wallNow});
        } else {
            seen[0] = wallNow;
        }
    }

    public void forget(String node) {
        lastRecordWall.remove(node);
    }

    /** The node's estimated current time, given the latest time its records told ({@code nodeTime}). */
    public long nodeNow(String node, long nodeTime, long wallNow) {
        long[] seen = lastRecordWall.get(node);
        long from = seen == null ? countFrom : Math.max(countFrom, seen[0]);
        long waited = Math.max(0L, wallNow - from);
        return nodeTime + waited;
    }
}
