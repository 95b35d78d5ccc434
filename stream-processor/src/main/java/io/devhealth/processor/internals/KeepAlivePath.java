package io.devhealth.processor.internals;

import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.ReportKind;
import java.util.Map;
import java.util.Objects;

/**
 * The steady state of a fleet, decided without building a state: a keep-alive from a device's only
 * source that repeats the source's latest word while the device shows that word, fresh. All such a
 * report can change is the source's refresh time and, with it, the device's deadline, which the
 * processor then moves in the device's pending refresh in place ({@link PendingRefresh}).
 *
 * <p>A shortcut of the general path ({@link SourceReport#after}, {@link DeviceState#withSourceMerged},
 * then "were only refresh times moved?"), which decides every other report; the two must agree on
 * every report this one takes ({@code KeepAlivePathTest} checks it on generated states and reports).
 * Why it exists: building the source, the device's state and its source map, a refresh, a table of
 * the node's refreshes and a node state for each keep-alive — most records a processor sees — was
 * about a third of the stream thread's time and most of its garbage (docs/PERFORMANCE.md §2).
 */
final class KeepAlivePath {

    /** {@link #refreshedAt}: not a report this path decides; the general path applies it. */
    static final long GENERAL = -1L;
    /** {@link #refreshedAt}: the report changes nothing (it is not later than the source's refresh time). */
    static final long UNCHANGED = 0L;

    private KeepAlivePath() {}

    /**
     * @param stored the device's state as stored, without its pending refresh
     * @param pending the device's pending refresh, or null
     * @param observedAt the report's time (positive)
     * @param timeoutMs the report's timeout ({@link io.devhealth.processor.TimeoutPolicy})
     * @param node the node's state after this report: its clock and its latest heartbeat
     * @return the source's new refresh time (the device's deadline follows from it:
     *         {@link SourceReport#staleAt(long, long)}), {@link #UNCHANGED} or {@link #GENERAL}
     */
    static long refreshedAt(DeviceState stored, PendingRefresh pending, DeviceHealthReport report, long observedAt, long timeoutMs,
                            NodeState node) {
        if (report.getKind() != ReportKind.KEEPALIVE) {
            return GENERAL;
        }
        SourceReport known;
        if (pending != null && pending.stored() == stored) {
            known = pending.followed(); // worked out when the refresh learnt its stored state: the state's objects stay untouched
        } else {
            known = followed(stored);
            if (known != null && pending != null && !pending.refreshesOnly(stored.onlySource().getKey())) {
                return GENERAL;
            }
        }
        if (known == null || known.kind() != report.getSource() || !Objects.equals(known.name(), report.getSourceName())
                || known.timeoutMs() != timeoutMs || observedAt < known.observedAt()
                || !known.repeats(report.getHealth(), report.getMessage(), report.getReason())
                || node.isDown(report.getSourceName())) {
            return GENERAL;
        }
        // The device as it is now: as stored, or with its pending refresh where that is newer (DeviceState#withRefresh).
        long refreshedAt;
        long deadline;
        if (pending != null && pending.refreshedAt(0) > known.refreshedAt()) {
            refreshedAt = pending.refreshedAt(0);
            deadline = pending.deadline();
        } else {
            refreshedAt = known.refreshedAt();
            deadline = stored.deadline();
        }
        // It shows its source's word while that is fresh (DeviceHealthMerger), and stays so after this report.
        long next = Math.max(refreshedAt, observedAt);
        if (deadline != SourceReport.staleAt(refreshedAt, timeoutMs) || node.nodeTime() >= SourceReport.staleAt(next, timeoutMs)) {
            return GENERAL;
        }
        return next == refreshedAt ? UNCHANGED : next;
    }

    /**
     * The only source of {@code state} when the state shows that source's word (its health, message,
     * reason and source kind, since a known time), as a fresh source makes it; else null.
     */
    static SourceReport followed(DeviceState state) {
        Map.Entry<String, SourceReport> only = state.since() == 0L ? null : state.onlySource();
        if (only == null) {
            return null;
        }
        SourceReport source = only.getValue();
        return state.health() == source.health() && state.source() == source.kind() && Objects.equals(state.message(), source.message())
                && Objects.equals(state.reason(), source.reason()) ? source : null;
    }
}
