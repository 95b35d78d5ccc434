package io.devhealth.collector.dra;

import io.devhealth.collector.dra.ObservedDevice.DeviceKey;
import io.devhealth.schema.HealthMessages;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceKind;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Turns one source's stream of full snapshots of a driver's devices into the reports worth sending.
 *
 * <p>A report goes out when a device appears, changes health, message or timeout ({@code CHANGE}),
 * disappears from the snapshot ({@code ABSENT}: never silently kept), or has not been reported for
 * half its timeout ({@code KEEPALIVE}), so the processor's silence detector stays fed while an
 * unchanged fleet of 10k nodes sends almost nothing. Not thread-safe: one instance per driver stream.
 */
public final class SnapshotDiff {

    private final String cluster;
    private final String node;
    private final String driver;
    private final SourceKind source;
    private final Duration defaultTimeout;
    private final Clock clock;
    private final Map<DeviceKey, Sent> lastSent = new LinkedHashMap<>();

    private record Sent(ObservedDevice device, Instant at) {}

    public SnapshotDiff(String cluster, String node, String driver, Duration defaultTimeout, Clock clock) {
        this(cluster, node, driver, SourceKind.DRA, defaultTimeout, clock);
    }

    /**
     * @param source the kind of source the snapshots come from; its name in the reports is {@code driver}
     *     (a driver's devices seen through its health stream, or through its device taints)
     */
    public SnapshotDiff(String cluster, String node, String driver, SourceKind source, Duration defaultTimeout, Clock clock) {
        this.cluster = Objects.requireNonNull(cluster);
        this.node = Objects.requireNonNull(node);
        this.driver = Objects.requireNonNull(driver);
        this.source = Objects.requireNonNull(source);
        this.defaultTimeout = Objects.requireNonNull(defaultTimeout);
        this.clock = Objects.requireNonNull(clock);
    }

    /** Reports to publish for {@code snapshot}, in snapshot order, absent devices last. */
    public List<DeviceHealthReport> apply(List<ObservedDevice> snapshot) {
        Instant now = clock.instant();
        List<DeviceHealthReport> reports = new ArrayList<>();
        Map<DeviceKey, ObservedDevice> current = new HashMap<>();
        for (ObservedDevice device : snapshot) {
            current.put(device.key(), device);
            Sent previous = lastSent.get(device.key());
            ReportKind kind;
            if (previous == null || !sameState(previous.device(), device)) {
                kind = ReportKind.CHANGE;
            } else if (!now.isBefore(previous.at().plus(keepAliveInterval(device)))) {
                kind = ReportKind.KEEPALIVE;
            } else {
                continue;
            }
            lastSent.put(device.key(), new Sent(device, now));
            reports.add(report(device, kind, now));
        }
        for (Iterator<Map.Entry<DeviceKey, Sent>> it = lastSent.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<DeviceKey, Sent> entry = it.next();
            if (!current.containsKey(entry.getKey())) {
                it.remove();
                ObservedDevice gone = new ObservedDevice(entry.getKey().pool(), entry.getKey().device(), HealthStatus.UNKNOWN,
                        "device missing from driver " + driver + " snapshot", entry.getValue().device().timeoutSeconds());
                reports.add(report(gone, ReportKind.ABSENT, now));
            }
        }
        return reports;
    }

    /** Forgets what was sent, e.g. after the stream broke: the next snapshot is reported in full. */
    public void reset() {
        lastSent.clear();
    }

    private Duration keepAliveInterval(ObservedDevice device) {
        Duration timeout = device.timeoutSeconds() > 0 ? Duration.ofSeconds(device.timeoutSeconds()) : defaultTimeout;
        return timeout.dividedBy(2);
    }

    private static boolean sameState(ObservedDevice a, ObservedDevice b) {
        return a.health() == b.health() && Objects.equals(a.message(), b.message()) && a.timeoutSeconds() == b.timeoutSeconds();
    }

    private DeviceHealthReport report(ObservedDevice device, ReportKind kind, Instant now) {
        return DeviceHealthReport.newBuilder()
                .setCluster(cluster)
                .setNode(node)
                .setSource(source)
                .setSourceName(driver)
                .setDevice(DeviceRef.newBuilder().setDriver(driver).setPool(device.pool()).setDevice(device.device()).build())
                .setHealth(device.health())
                .setKind(kind)
                .setMessage(device.message() == null || device.message().isEmpty() ? null
                        : HealthMessages.truncateUtf8(device.message(), HealthMessages.MAX_BYTES))
                .setObservedAt(now)
                .setTimeoutSeconds(device.timeoutSeconds() > 0 ? device.timeoutSeconds() : null)
                .build();
    }
}
