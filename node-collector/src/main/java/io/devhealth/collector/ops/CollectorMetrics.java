package io.devhealth.collector.ops;

import io.devhealth.collector.dra.RegistrationCheck;
import io.devhealth.collector.spool.DiskSpool;
import io.devhealth.collector.spool.Priority;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.NodeAllocations;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Clock;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The collector's meters (names as Prometheus shows them, {@code devhealth_collector_*}).
 *
 * <ul>
 *   <li>{@code dra_streams_connected{driver}}: 1 while the driver's health stream is open</li>
 *   <li>{@code dra_registrations_refused_total{reason}}: plugin registrations refused by {@code RegistrationCheck}
 *       (invalid driver name, endpoint outside the driver's plugin directory, ...), each time one is asked</li>
 *   <li>{@code dra_snapshots_refused_total{driver,reason}}: DRA messages refused whole (message_too_large,
 *       too_many_devices); the stream then reconnects</li>
 *   <li>{@code reports_total{kind}}: records published, by kind (change, keepalive, absent, heartbeat, allocations, inventory)</li>
 *   <li>{@code spool_records}, {@code spool_bytes}, {@code spool_max_bytes}, {@code spool_oldest_age_seconds}</li>
 *   <li>{@code spool_dropped_total{priority,reason}}: records given up (evicted / rejected_full / failed)</li>
 *   <li>{@code kafka_send_seconds}: from hand-off to the producer to the broker's acknowledgement</li>
 *   <li>{@code kafka_poison_total}: records Kafka or the encoder can never take (logged, removed)</li>
 *   <li>{@code kafka_send_failures_total}: failed attempts that will be retried</li>
 *   <li>{@code device_health{source,driver,pool,device,UUID,GPU_I_ID,namespace,pod,container,health}}: each device's
 *       health by source, attributed to the pods using it ({@link DeviceHealthGauges}), once {@link #bindDevices} was called</li>
 * </ul>
 *
 * <p>The production collector tags every meter with its {@code cluster} and {@code node} ({@link #tagNode}).
 */
public final class CollectorMetrics {

    private static final String PREFIX = "devhealth.collector.";

    private final MeterRegistry registry;
    private final Map<String, AtomicInteger> connected = new ConcurrentHashMap<>();
    private final Map<String, Counter> reports = new ConcurrentHashMap<>();
    private final Timer sendLatency;
    private final Counter poison;
    private final Counter sendFailures;
    private volatile DeviceHealthGauges devices;

    public CollectorMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.sendLatency = Timer.builder(PREFIX + "kafka.send")
                .description("Time from handing a spooled record to the producer to the broker's acknowledgement")
                .publishPercentileHistogram(false)
                .register(registry);
        this.poison = Counter.builder(PREFIX + "kafka.poison")
                .description("Spooled records that can never be sent (undecodable, too large); logged and removed")
                .register(registry);
        this.sendFailures = Counter.builder(PREFIX + "kafka.send.failures")
                .description("Failed send attempts; the records stay spooled and are retried")
                .register(registry);
    }

    public MeterRegistry registry() {
        return registry;
    }

    /**
     * Tags every meter of {@code registry} with the collector's cluster and node: a collector's series
     * then say which node they describe however Prometheus found the collector. Call it before any meter
     * is registered.
     */
    public static MeterRegistry tagNode(MeterRegistry registry, String cluster, String node) {
        registry.config().commonTags("cluster", cluster, "node", node);
        return registry;
    }

    /** Starts the per-device health series ({@link DeviceHealthGauges}), fed by {@link #reported} and {@link #allocated}. */
    public void bindDevices(Clock clock, Duration defaultTimeout) {
        devices = new DeviceHealthGauges(registry, clock, defaultTimeout);
    }

    /** A device report the collector publishes. */
    public void reported(DeviceHealthReport report) {
        DeviceHealthGauges gauges = devices;
        if (gauges != null) {
            gauges.reported(report);
        }
    }

    /** An allocation snapshot the collector publishes. */
    public void allocated(NodeAllocations allocations) {
        DeviceHealthGauges gauges = devices;
        if (gauges != null) {
            gauges.allocated(allocations);
        }
    }

    public void streamConnected(String driver, boolean up) {
        connected.computeIfAbsent(driver, d -> {
            AtomicInteger value = new AtomicInteger();
            Gauge.builder(PREFIX + "dra.streams.connected", value, AtomicInteger::get)
                    .description("1 while the driver's DRAResourceHealth stream is open")
                    .tag("driver", d)
                    .register(registry);
            return value;
        }).set(up ? 1 : 0);
    }

    public void registrationRefused(RegistrationCheck.Refusal refusal) {
        Counter.builder(PREFIX + "dra.registrations.refused")
                .description("Plugin registrations refused: invalid driver name or an endpoint outside the driver's plugin directory")
                .tag("reason", refusal.label())
                .register(registry).increment();
    }

    public void snapshotRefused(String driver, String reason) {
        Counter.builder(PREFIX + "dra.snapshots.refused")
                .description("DRA health messages refused whole (too large, too many devices); the stream reconnects")
                .tag("driver", driver)
                .tag("reason", reason)
                .register(registry).increment();
    }

    public void published(String kind) {
        reports.computeIfAbsent(kind, k -> Counter.builder(PREFIX + "reports")
                .description("Records accepted into the spool, by kind")
                .tag("kind", k.toLowerCase(Locale.ROOT))
                .register(registry)).increment();
    }

    public void sent(Duration latency) {
        sendLatency.record(latency);
    }

    public void poison() {
        poison.increment();
    }

    public void sendFailed() {
        sendFailures.increment();
    }

    /** Gauges and drop counters read from the spool when scraped. */
    public void bindSpool(DiskSpool spool, Clock clock) {
        Gauge.builder(PREFIX + "spool.records", spool, DiskSpool::records).description("Records waiting in the spool").register(registry);
        Gauge.builder(PREFIX + "spool.bytes", spool, DiskSpool::bytes).description("Bytes of records in the spool").register(registry);
        Gauge.builder(PREFIX + "spool.max.bytes", spool, DiskSpool::maxBytes).description("The spool's disk budget").register(registry);
        Gauge.builder(PREFIX + "spool.oldest.age.seconds", spool,
                        s -> s.oldestAcceptedAt().map(t -> Duration.between(t, clock.instant()).toMillis() / 1000.0).orElse(0.0))
                .description("Age of the oldest record not yet acknowledged by Kafka")
                .register(registry);
        for (Priority priority : Priority.values()) {
            for (DiskSpool.DropReason reason : DiskSpool.DropReason.values()) {
                FunctionCounter.builder(PREFIX + "spool.dropped", spool, s -> s.dropped(priority, reason))
                        .description("Records the spool gave up: evicted or rejected for want of space, or failed to write")
                        .tag("priority", priority.name().toLowerCase(Locale.ROOT))
                        .tag("reason", reason.name().toLowerCase(Locale.ROOT))
                        .register(registry);
            }
        }
    }
}
