package io.devhealth.processor.internals;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.SourceKind;

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

    public SourceReport withRefreshedAt(long time) {
        return new SourceReport(kind, name, health, message, reason, observedAt, time, timeoutMs);
    }

    /** Node time at which this report goes stale. */
    public long staleAt() {
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
