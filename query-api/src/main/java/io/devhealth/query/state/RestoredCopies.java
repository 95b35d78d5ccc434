package io.devhealth.query.state;

import java.util.HashMap;
import java.util.Map;

/**
 * Which of this instance's store copies have finished restoring since they began here: a copy has, once its
 * position reached the end its changelog had when this instance first saw the copy. Only such a copy is read as it
 * stands within a bound in records ({@code StandbyReads.maxLagRecords}).
 *
 * <p>Why a bound in records is not enough alone: a copy that is still restoring holds the changelog up to its
 * position, and the records it lacks may be the only ones of whole keys. A node's devices each get written when
 * they change, so a new instance's standby copy, restored up to a few thousand records short of the end, held the
 * node's entry and none of its devices, and answered the node with no devices (the scale-out test, right after a
 * fourth instance joined). A copy that has caught up once lags afterwards only by the records written since its last
 * poll, the staleness a standby read admits.
 *
 * <p>The end is the changelog's last stable offset ({@link CommittedEnds}): what a copy can hold, not the records of
 * a transaction still open. A copy starts over when its position goes back (Kafka Streams wiped it and restores it
 * anew, a corrupted task) or when it is missing from an observation (its task moved away; should it come back, it
 * restores from its checkpoint). A copy whose changelog ends in an aborted transaction when first seen, on a
 * partition nothing is written to afterwards, stays unrestored: Kafka Streams' position is the offset after the
 * last record it applied, and the aborted records and their marker lie between that and the end. Such a copy
 * answers 503, retry shortly, until the partition's next committed record; it never answers with less than it
 * should.
 *
 * <p>Thread-safe: the query API's threads observe and ask concurrently.
 */
public final class RestoredCopies {

    /**
     * How far short of the end a copy may be and count as restored: under exactly-once the marker that commits
     * the last transaction takes an offset of its own, which no record restores.
     */
    static final long MARKER_OFFSETS = 1L;

    private record Copy(String store, int partition) {}

    /** A copy as last seen: the end it must reach, its position, and whether it has reached that end. */
    private record Progress(long target, long position, boolean restored) {

        Progress next(long now, long end) {
            if (now < position) {
                return first(now, end);
            }
            return new Progress(target, now, restored || reached(now, target));
        }

        static Progress first(long position, long end) {
            return new Progress(end, position, reached(position, end));
        }

        private static boolean reached(long position, long end) {
            return position >= end - MARKER_OFFSETS;
        }
    }

    private final Map<Copy, Progress> copies = new HashMap<>();

    /**
     * Takes in every copy this instance keeps, by store and partition ({@link CommittedEnds}), and returns them, so
     * that every fetch of the lags passes through here.
     */
    synchronized Map<String, Map<Integer, CopyLag>> observe(Map<String, Map<Integer, CopyLag>> lags) {
        Map<Copy, Progress> seen = new HashMap<>();
        lags.forEach((store, byPartition) -> byPartition.forEach((partition, lag) -> {
            Copy copy = new Copy(store, partition);
            Progress before = copies.get(copy);
            seen.put(copy, before == null ? Progress.first(lag.position(), lag.end()) : before.next(lag.position(), lag.end()));
        }));
        copies.clear();
        copies.putAll(seen);
        return lags;
    }

    /** Whether this copy, as last observed, has reached the end its changelog had when it was first seen here. */
    synchronized boolean restored(String store, int partition) {
        Progress progress = copies.get(new Copy(store, partition));
        return progress != null && progress.restored();
    }

    /** The end this copy must reach to count as restored, for messages; -1 when it was not observed. */
    synchronized long target(String store, int partition) {
        Progress progress = copies.get(new Copy(store, partition));
        return progress == null ? -1L : progress.target();
    }
}
