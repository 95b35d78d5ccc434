package io.devhealth.collector.nvml.internals;

import io.devhealth.schema.avro.HealthStatus;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * One thing wrong (or worth saying) about a device: an XID, a reading past its threshold, a lost
 * GPU. Mutable; owned by the scheduler thread.
 *
 * @see HealthTracker
 */
public final class Finding {

    private final String reason;
    private final HealthStatus health;
    private String text;
    private final boolean untilReset;
    private final Instant first;
    private Instant last;
    private long count;
    private Instant expiresAt;

    Finding(String reason, HealthStatus health, String text, boolean untilReset, Instant first, Instant last, long count,
            Instant expiresAt) {
        this.reason = reason;
        this.health = health;
        this.text = text;
        this.untilReset = untilReset;
        this.first = first;
        this.last = last;
        this.count = count;
        this.expiresAt = expiresAt;
    }

    /** Machine-readable code, e.g. {@code XID-79}, {@code REMAPPED-ROWS-FAILURE}, {@code GPU-LOST}. */
    public String reason() {
        return reason;
    }

    /** The text without the repeat count. */
    String text() {
        return text;
    }

    public HealthStatus health() {
        return health;
    }

    public boolean untilReset() {
        return untilReset;
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

    Instant expiresAt() {
        return expiresAt;
    }

    void occurred(long times, Instant at, Instant newExpiry, String newText) {
        count += times;
        if (at.isAfter(last)) {
            last = at;
        }
        expiresAt = newExpiry;
        text = newText;
    }

    void refresh(String newText, Instant at) {
        text = newText;
        last = at;
    }

    /** The human-readable message: the text, and for repeats how often and when. */
    public String message() {
        if (count <= 1) {
            return text;
        }
        return text + " (" + count + " times, " + first.truncatedTo(ChronoUnit.SECONDS) + " to " + last.truncatedTo(ChronoUnit.SECONDS)
                + ")";
    }

    /** UNHEALTHY 2, UNKNOWN 1, HEALTHY 0. */
    static int severity(HealthStatus health) {
        return switch (health) {
            case UNHEALTHY -> 2;
            case UNKNOWN -> 1;
            default -> 0;
        };
    }
}
