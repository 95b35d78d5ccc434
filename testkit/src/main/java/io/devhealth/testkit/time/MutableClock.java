package io.devhealth.testkit.time;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock that tests move by hand, so timeouts are tested without sleeping. Thread-safe. */
public final class MutableClock extends Clock {

    private volatile Instant now;

    public MutableClock(Instant start) {
        this.now = start;
    }

    public static MutableClock at(String isoInstant) {
        return new MutableClock(Instant.parse(isoInstant));
    }

    public void advance(Duration duration) {
        now = now.plus(duration);
    }

    public void set(Instant instant) {
        now = instant;
    }

    @Override
    public Instant instant() {
        return now;
    }

    /**
     * A view of this clock that moves on by {@code step} with every read, on top of where this clock is
     * set: each reading is later than the one before, as a real clock's readings are moments apart, so
     * that a test can tell which of two reads a value came from.
     */
    public Clock tickingBy(Duration step) {
        AtomicLong reads = new AtomicLong();
        MutableClock base = this;
        return new Clock() {
            @Override
            public Instant instant() {
                return base.instant().plus(step.multipliedBy(reads.getAndIncrement()));
            }

            @Override
            public ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(ZoneId zone) {
                return this;
            }
        };
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}
