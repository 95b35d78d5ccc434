package io.devhealth.processor.internals.node;

import io.devhealth.processor.internals.rules.NodeState;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Estimates each node's current time, so that silence is judged on the node's clock and never on
 * the processor's: a processor that lags, restarts or pauses must not call a node silent that was not.
 *
 * <p>A node's time is what its own records say ({@code observedAt}, kept in {@link NodeState}), plus
 * the time this processor has spent waiting for its next record while being able to receive it. Four
 * rules keep that wait honest:
 * <ul>
 *   <li>The wait counts from the last record of that node this instance processed, which a lagging
 *       processor replaying a backlog reaches at the pace of the backlog, not of the wall clock.</li>
 *   <li>Only time the processor's input has covered counts. The processor is behind its input by the
 *       wall time at which it processed its latest record less the newest record time it had seen on
 *       its partition (the task's stream time): a processor 40 s behind has not yet read what its nodes
 *       sent in the last 40 s, so a node's next report may be among it. The wait is measured on that
 *       frontier, wall time less how far behind the processor was at its latest record: while the
 *       processor is behind at a steady distance the wait runs at wall pace but starts that much later,
 *       and while it catches up, faster. A partition whose nodes have all gone quiet keeps its last
 *       distance, so their silence is still seen at wall pace. Stream time is the newest record time,
 *       so a spool replayed late does not move it. Only a change of the distance changes a wait: a
 *       steady offset between the nodes' clocks and the processor's cancels out, and a node clock ahead
 *       of the processor's makes the distance zero, which is the plain wall-clock wait.</li>
 *   <li>After a start (restore, rebalance) nothing this instance did not witness counts: waits count
 *       from {@code start + grace}, giving the backlog time to be fetched.</li>
 *   <li>A gap between two ticks far longer than the tick interval means this processor was not
 *       running (GC pause, blocked thread, suspended host): waits count again from
 *       {@code now + grace}, as after a start.</li>
 * </ul>
 * Not thread-safe: one per stream task (one input partition), used from its stream thread only. Wall
 * time is passed in (Kafka Streams' cached system time), so tests drive it.
 */
public final class SilenceClock {

    private static final Logger LOGGER = LoggerFactory.getLogger(SilenceClock.class);

    private final long graceMs;
    private final long stallThresholdMs;
    /**
     * Per node, the input frontier at its latest record here (the wall time less how far behind the
     * processor was): a mutable cell, as it moves on every record.
     */
    private final Map<String, long[]> lastRecordFrontier = new HashMap<>();
    /** How far behind its input the processor was at its latest record, in ms. */
    private long behindMs;
    private long countFrom = Long.MAX_VALUE;
    private long lastTick = Long.MIN_VALUE;

    public SilenceClock(long graceMs, long stallThresholdMs) {
        this.graceMs = graceMs;
        this.stallThresholdMs = stallThresholdMs;
    }

    /** This instance (re)starts at {@code wallNow}: silence before it is not known. */
    public void start(long wallNow) {
        lastRecordFrontier.clear();
        behindMs = 0;
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

    /**
     * A record of {@code node} was processed at {@code wallNow}, when the newest record time seen on
     * this processor's input was {@code streamTime}.
     */
    public void recordSeen(String node, long wallNow, long streamTime) {
        behindMs = Math.max(0L, wallNow - streamTime);
        long frontier = wallNow - behindMs;
        long[] seen = lastRecordFrontier.get(node);
        if (seen == null) {
            lastRecordFrontier.put(node, new long[] {frontier});
        } else {
            seen[0] = frontier;
        }
    }

    public void forget(String node) {
        lastRecordFrontier.remove(node);
    }

    /** How far behind its input this processor was at its latest record, in ms. */
    public long behindMs() {
        return behindMs;
    }

    /** The node's estimated current time, given the latest time its records told ({@code nodeTime}). */
    public long nodeNow(String node, long nodeTime, long wallNow) {
        long[] seen = lastRecordFrontier.get(node);
        long from = seen == null ? countFrom : Math.max(countFrom, seen[0]);
        long waited = Math.max(0L, wallNow - behindMs - from);
        return nodeTime + waited;
    }
}
