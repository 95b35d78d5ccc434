package io.devhealth.processor.internals;

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
 */
public record SourceReport(
        SourceKind kind,
        String name,
        HealthStatus health,
        String message,
        String reason,
        long observedAt,
        long refreshedAt,
        long timeoutMs) {

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
    public static SourceReport after(DeviceHealthReport report, SourceReport known, long observedAt, long timeoutMs, boolean sourceDown) {
        HealthStatus health = report.getKind() == ReportKind.ABSENT ? HealthStatus.UNKNOWN : report.getHealth();
        if (report.getKind() == ReportKind.KEEPALIVE && known != null && known.repeats(health, report.getMessage(), report.getReason())) {
            long refreshedAt = sourceDown ? known.refreshedAt() : Math.max(known.refreshedAt(), observedAt);
            return new SourceReport(known.kind(), known.name(), health, known.message(), known.reason(), known.observedAt(),
                    refreshedAt, timeoutMs);
        }
        return new SourceReport(report.getSource(), report.getSourceName(), health, report.getMessage(), report.getReason(),
                observedAt, observedAt, timeoutMs);
    }

    /**
     * Whether {@code report} changes nothing of this source but its refresh time: a keep-alive that says
     * again what the source said, with the same timeout, from a source the node says is up. The case of
     * {@link #after} that returns this source refreshed ({@link #withRefreshedAt}); {@code DeviceRulesTest}
     * checks the two agree.
     */
    public boolean onlyRefreshedBy(DeviceHealthReport report, long timeoutMs, boolean sourceDown) {
        return report.getKind() == ReportKind.KEEPALIVE && !sourceDown && timeoutMs == this.timeoutMs
                && repeats(report.getHealth(), report.getMessage(), report.getReason());
    }

    /** Whether a report of {@code health}, {@code message} and {@code reason} says what this one says. */
    public boolean repeats(HealthStatus health, String message, String reason) {
        return this.health == health && Objects.equals(this.message, message) && Objects.equals(this.reason, reason);
    }

    public SourceReport withRefreshedAt(long time) {
        return new SourceReport(kind, name, health, message, reason, observedAt, time, timeoutMs);
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
