package io.devhealth.collector.nvml.internals;

import io.devhealth.schema.HealthMessages;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceKind;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns device views into the reports worth sending, like the DRA path's {@code SnapshotDiff}:
 * {@code CHANGE} when a device appears or its health or set of reasons changes, {@code KEEPALIVE}
 * (with the current message, e.g. an updated storm count) every half timeout otherwise, {@code ABSENT}
 * (Unknown) when a device drops out (a MIG instance destroyed). A count or a temperature that moves
 * without changing the reasons therefore never causes a report of its own.
 */
public final class ReportEmitter {

    public static final String SOURCE_NAME = "nvml";

    private final String cluster;
    private final String node;
    private final Duration timeout;
    private final Map<DeviceKey, Sent> lastSent = new LinkedHashMap<>();

    private record Sent(String stateKey, Instant at) {}

    public ReportEmitter(String cluster, String node, Duration timeout) {
        this.cluster = cluster;
        this.node = node;
        this.timeout = timeout;
    }

    public List<DeviceHealthReport> emit(List<HealthTracker.DeviceView> views, Instant now) {
        List<DeviceHealthReport> reports = new ArrayList<>();
        Set<DeviceKey> present = new HashSet<>();
        Duration keepAlive = timeout.dividedBy(2);
        for (HealthTracker.DeviceView view : views) {
            present.add(view.key());
            Sent previous = lastSent.get(view.key());
            ReportKind kind;
            if (previous == null || !previous.stateKey().equals(view.stateKey())) {
                kind = ReportKind.CHANGE;
            } else if (!now.isBefore(previous.at().plus(keepAlive))) {
                kind = ReportKind.KEEPALIVE;
            } else {
                continue;
            }
            lastSent.put(view.key(), new Sent(view.stateKey(), now));
            reports.add(report(view.key(), view.health(), kind, view.message(), view.reason(), now));
        }
        for (Iterator<DeviceKey> it = lastSent.keySet().iterator(); it.hasNext(); ) {
            DeviceKey key = it.next();
            if (!present.contains(key)) {
                it.remove();
                reports.add(report(key, HealthStatus.UNKNOWN, ReportKind.ABSENT, "device no longer reported by NVML", "ABSENT", now));
            }
        }
        return reports;
    }

    private DeviceHealthReport report(DeviceKey key, HealthStatus health, ReportKind kind, String message, String reason, Instant now) {
        return DeviceHealthReport.newBuilder()
                .setCluster(cluster)
                .setNode(node)
                .setSource(SourceKind.NVML)
                .setSourceName(SOURCE_NAME)
                .setDevice(key.toDeviceRef())
                .setHealth(health)
                .setKind(kind)
                .setMessage(message == null ? null : HealthMessages.truncateUtf8(message, HealthMessages.MAX_BYTES))
                .setReason(reason)
                .setObservedAt(now)
                .setTimeoutSeconds(timeout.toSeconds())
                .build();
    }
}
