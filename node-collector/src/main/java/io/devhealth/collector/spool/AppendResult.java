package io.devhealth.collector.spool;

/**
 * The outcome of {@link DiskSpool#append}.
 *
 * @param sequence the sequence given to the record, or -1 when it was not accepted
 */
public record AppendResult(Outcome outcome, long sequence) {

    public enum Outcome {
        /** On disk (at least in the OS page cache: survives a crash of the collector, see {@link DiskSpool}). */
        ACCEPTED,
        /** The disk budget is full and nothing of lower priority could be evicted. Counted as a drop. */
        REJECTED_FULL,
        /** The storage failed (disk error, spool closed). Counted as a drop. */
        FAILED
    }

    static AppendResult accepted(long sequence) {
        return new AppendResult(Outcome.ACCEPTED, sequence);
    }

    static AppendResult rejected(Outcome outcome) {
        return new AppendResult(outcome, -1);
    }

    public boolean accepted() {
        return outcome == Outcome.ACCEPTED;
    }
}
