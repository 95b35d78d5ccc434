package io.devhealth.processor.internals.rules;

import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceKind;
import java.util.Objects;

/**
 * The latest word of one source (a DRA driver, NVML…) about one device, as kept in the device store.
 *
 * @param observedAt node time of the report that set {@code health}/{@code message}
 * @param refreshedAt node time of the latest evidence that the source still stands by it (a CHANGE or
 *                    a KEEPALIVE); silence is measured from here
 * @param timeoutMs how long the report stays fresh after {@code refreshedAt}
 * @param flaps the source's recent changes of health and its flap-damping hold ({@link Flaps}); null
 *              when it has none. {@code health}, {@code message} and {@code reason} are always what
 *              the source said; what the device is shown of it is {@link #shownHealth()} and the like.
 */
public record SourceReport(
        SourceKind kind,
        String name,
        HealthStatus health,
        String message,
        String reason,
        long observedAt,
        long refreshedAt,
        long timeoutMs,
        Flaps flaps) {

    /** A source's word without flaps. */
    public SourceReport(SourceKind kind, String name, HealthStatus health, String message, String reason, long observedAt,
                        long refreshedAt, long timeoutMs) {
        this(kind, name, health, message, reason, observedAt, refreshedAt, timeoutMs, null);
    }

    /** The key of this source in a device's source map: {@code DRA:gpu.nvidia.com}, {@code NVML:nvml}. */
    public static String key(SourceKind kind, String name) {
        return kind + ":" + name;
    }

    public String key() {
        return key(kind, name);
    }

    /**
     * Whether a report observed at {@code observedAt} is news about this source: not older than the
     * latest evidence of what the source says (its refresh time). An older one — a change the collector
     * sent again after keep-alives, a replay of a spool — is superseded by the keep-alives that came
     * after it; applying it would move the refresh time back and turn the device Unknown early.
     */
    public boolean supersededBy(long observedAt) {
        return observedAt >= refreshedAt;
    }

    /**
     * The source's latest word after {@code report}: a keep-alive that repeats what the source said
     * last moves only its refresh time, anything else replaces it.
     *
     * @param known the source's latest word before, or null
     * @param sourceDown whether the node's latest heartbeat says the source is down: a keep-alive from a
     *                   source the node says is down proves nothing, so the device must not stay Healthy
     *                   on it, and goes Unknown when its last real word times out
     */
    public static SourceReport after(DeviceHealthReport report, SourceReport known, long observedAt, long timeoutMs, boolean sourceDown,
                                     FlapLimits flapLimits) {
        HealthStatus health = report.getKind() == ReportKind.ABSENT ? HealthStatus.UNKNOWN : report.getHealth();
        Flaps flaps = known == null ? null : Flaps.at(known.flaps, observedAt);
        if (report.getKind() == ReportKind.KEEPALIVE && known != null && known.repeats(health, report.getMessage(), report.getReason())) {
            long refreshedAt = sourceDown ? known.refreshedAt() : Math.max(known.refreshedAt(), observedAt);
            return new SourceReport(known.kind(), known.name(), health, known.message(), known.reason(), known.observedAt(),
                    refreshedAt, timeoutMs, flaps);
        }
        if (known != null && known.health != health) {
            flaps = Flaps.afterChange(flaps, observedAt, known.health, health, flapLimits, known.label());
        }
        return new SourceReport(report.getSource(), report.getSourceName(), health, report.getMessage(), report.getReason(),
                observedAt, observedAt, timeoutMs, flaps);
    }

    /**
     * Whether {@code report} changes nothing of this source but its refresh time: a keep-alive that says
     * again what the source said, with the same timeout, from a source the node says is up. The case of
     * {@link #after} that returns this source refreshed ({@link #withRefreshedAt}); {@code DeviceRulesTest}
     * checks the two agree.
     */
    public boolean onlyRefreshedBy(DeviceHealthReport report, long timeoutMs, boolean sourceDown) {
        // A held source's keep-alive may end its hold: the general path decides.
        return report.getKind() == ReportKind.KEEPALIVE && !sourceDown && timeoutMs == this.timeoutMs
                && !held()
                && repeats(report.getHealth(), report.getMessage(), report.getReason());
    }

    /** Whether a report of {@code health}, {@code message} and {@code reason} says what this one says. */
    public boolean repeats(HealthStatus health, String message, String reason) {
        return this.health == health && Objects.equals(this.message, message) && Objects.equals(this.reason, reason);
    }

    public SourceReport withRefreshedAt(long time) {
        return new SourceReport(kind, name, health, message, reason, observedAt, time, timeoutMs, flaps);
    }

    /** This source as it is at node time {@code at}: a flap-damping hold that is over is dropped. */
    SourceReport at(long at) {
        Flaps now = Flaps.at(flaps, at);
        return now == flaps ? this : new SourceReport(kind, name, health, message, reason, observedAt, refreshedAt, timeoutMs, now);
    }

    /** Whether the device is shown the word this source is held at by flap damping, not the source's own. */
    boolean held() {
        return flaps instanceof Flaps.Held;
    }

    /** The health the device is shown of this source: its word, or while it flaps the health it is held at. */
    public HealthStatus shownHealth() {
        return flaps instanceof Flaps.Held held ? held.health() : health;
    }

    public String shownMessage() {
        return flaps instanceof Flaps.Held held ? held.message() : message;
    }

    public String shownReason() {
        return held() ? Flaps.REASON_FLAPPING : reason;
    }

    /** Node time at which what the device is shown of this source changes by time alone: it goes stale, or its hold ends. */
    public long changesAt() {
        return flaps instanceof Flaps.Held held ? Math.min(staleAt(), held.releaseAt()) : staleAt();
    }

    /** Node time at which this report goes stale. */
    public long staleAt() {
        return staleAt(refreshedAt, timeoutMs);
    }

    /** Node time at which a report refreshed at {@code refreshedAt} goes stale. */
    static long staleAt(long refreshedAt, long timeoutMs) {
        long at = refreshedAt + timeoutMs;
        return at < refreshedAt ? Long.MAX_VALUE : at;
    }

    public boolean freshAt(long nodeTime) {
        return nodeTime < staleAt();
    }

    /** How the source is named in messages: {@code gpu.nvidia.com (DRA)}. */
    public String label() {
        return (name == null || name.isEmpty() ? "unnamed source" : name) + " (" + kind + ")";
    }
}
