package io.devhealth.processor;

import io.devhealth.processor.internals.input.InvalidInputException;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * The times a collector record may carry, judged against the processor's wall clock: its
 * {@code observedAt} and its record timestamp no later than now + {@code futureSkew} and no earlier
 * than now - {@code maxAge}, and its collector epoch (the millisecond its collector's spool was
 * created) positive and no later than now + {@code futureSkew}.
 *
 * <p>One record from the future would do lasting harm, signed or not: its time advances the
 * window stores' stream time, and they then drop every entry older than their retention (months of
 * device and pod history in one record); it advances the node's clock, so every device of the node
 * looks silent; and an epoch of {@code Long.MAX_VALUE} puts the node's de-duplication watermark where
 * no later record can pass it. A record older than the history keeps cannot be kept anyway. Such a
 * record is refused before it changes any state and goes to the dead-letter topic with the reason.
 *
 * @param futureSkew how far ahead of the processor's clock a node's clock may run
 * @param maxAge how old a record may be; the history retention in production
 */
public record TimeBounds(Duration futureSkew, Duration maxAge) {

    public static final Duration DEFAULT_FUTURE_SKEW = Duration.ofMinutes(10);

    public TimeBounds {
        Objects.requireNonNull(futureSkew, "futureSkew");
        Objects.requireNonNull(maxAge, "maxAge");
        if (futureSkew.isNegative() || maxAge.isNegative()) {
            throw new IllegalArgumentException("time bounds must not be negative: futureSkew=" + futureSkew + " maxAge=" + maxAge);
        }
    }

    /**
     * @param what the kind of record, for the reason ({@code report}, {@code heartbeat}, {@code allocations}, {@code inventory})
     * @param observedAt the record's observedAt; null when it has none (checked where it is required)
     * @param wallNow the processor's wall-clock time, epoch milliseconds
     * @throws InvalidInputException naming the time, the bound and the node when a time lies outside
     */
    public void check(String node, String what, Instant observedAt, long recordTimestamp, long collectorEpoch, long wallNow) {
        long latest = saturatedAdd(wallNow, futureSkew.toMillis());
        long earliest = wallNow - Math.min(wallNow, maxAge.toMillis());
        if (observedAt != null) {
            within(node, what, "observedAt", observedAt.toEpochMilli(), earliest, latest, wallNow);
        }
        within(node, what, "record timestamp", recordTimestamp, earliest, latest, wallNow);
        if (collectorEpoch <= 0) {
            // A collector stamps every record with the millisecond its spool was created. A record without one is
            // not a collector's, and would only ever be dropped as a duplicate (it is not after the node's initial
            // watermark, epoch 0 sequence 0): refused with the reason instead of lost without one.
            throw new InvalidInputException(what + " from node " + node + " without a collector epoch (" + collectorEpoch
                    + "): every collector record carries the millisecond its spool was created");
        }
        if (collectorEpoch > latest) {
            throw new InvalidInputException(what + " from node " + node + " with collector epoch " + collectorEpoch
                    + ", implausible: a spool cannot have been created after " + Instant.ofEpochMilli(latest)
                    + " (processor time " + Instant.ofEpochMilli(wallNow) + " + future skew " + futureSkew + ")");
        }
    }

    private void within(String node, String what, String field, long millis, long earliest, long latest, long wallNow) {
        if (millis > latest) {
            throw new InvalidInputException(what + " from node " + node + " with " + field + " " + describe(millis)
                    + " in the future: later than processor time " + Instant.ofEpochMilli(wallNow) + " + future skew " + futureSkew);
        }
        if (millis < earliest) {
            throw new InvalidInputException(what + " from node " + node + " with " + field + " " + describe(millis)
                    + " too old: earlier than processor time " + Instant.ofEpochMilli(wallNow) + " - max age " + maxAge);
        }
    }

    private static String describe(long millis) {
        try {
            return Instant.ofEpochMilli(millis).toString();
        } catch (java.time.DateTimeException e) {
            return millis + " ms";
        }
    }

    private static long saturatedAdd(long a, long b) {
        long sum = a + b;
        return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
    }
}
