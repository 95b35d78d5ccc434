package io.devhealth.collector;

import io.devhealth.collector.dra.DraHealthStream;
import io.devhealth.collector.dra.DriverStreamListener;
import io.devhealth.collector.dra.HealthApiVersion;
import io.devhealth.collector.dra.ObservedDevice;
import io.devhealth.collector.dra.SnapshotDiff;
import io.devhealth.collector.podresources.PodResourcesPoller;
import io.devhealth.collector.publish.KafkaReportPublisher;
import io.devhealth.collector.publish.ReportPublisher;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.NodeHeartbeat;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.avro.SourceState;
import io.devhealth.schema.avro.SourceStatus;
import io.devhealth.schema.serde.SchemaRegistries;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node-collector of one node: DRA health streams and kubelet allocations in, reports out.
 *
 * <p>Sources run on gRPC and scheduler threads; everything they tell is serialized through
 * per-driver {@link SnapshotDiff}s (guarded by their own lock) and handed to the publisher.
 */
public final class NodeCollector implements DriverStreamListener, AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(NodeCollector.class);

    private final CollectorConfig config;
    private final ReportPublisher publisher;
    private final Clock clock;
    private final ScheduledExecutorService scheduler;
    private final Map<String, SnapshotDiff> diffs = new ConcurrentHashMap<>();
    private final Map<String, SourceState> sources = new ConcurrentHashMap<>();
    private final List<DraHealthStream> streams = new ArrayList<>();
    private PodResourcesPoller poller;

    public NodeCollector(CollectorConfig config, ReportPublisher publisher, Clock clock) {
        this.config = config;
        this.publisher = publisher;
        this.clock = clock;
        this.scheduler = Executors.newScheduledThreadPool(1, runnable -> {
            Thread thread = new Thread(runnable, "devhealth-collector");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** A collector publishing to Kafka as {@code config} says. */
    public static NodeCollector create(CollectorConfig config, Clock clock) {
        ReportPublisher publisher = new KafkaReportPublisher(config.nodeName(), config.topics(), config.kafkaClientProperties(),
                SchemaRegistries.fromUrl(config.schemaRegistryUrl(), config.originals()), clock);
        return new NodeCollector(config, publisher, clock);
    }

    public void start() {
        for (CollectorConfig.DriverEndpoint endpoint : config.driverEndpoints()) {
            // Static drivers are assumed to speak v1alpha1, the only version released kubelets speak.
            DraHealthStream stream = new DraHealthStream(endpoint.driverName(), endpoint.socket(), HealthApiVersion.V1ALPHA1,
                    this, scheduler, config.reconnectBackoffMax());
            sourceState(endpoint.driverName(), SourceStatus.DOWN, "connecting");
            streams.add(stream);
            stream.start();
        }
        poller = new PodResourcesPoller(config.clusterName(), config.nodeName(), config.podResourcesSocket(),
                config.podResourcesPollInterval(), config.allocationsResendInterval(), publisher, clock);
        poller.start(scheduler);
        long heartbeatMs = config.heartbeatInterval().toMillis();
        scheduler.scheduleAtFixedRate(this::publishHeartbeat, heartbeatMs, heartbeatMs, TimeUnit.MILLISECONDS);
        LOGGER.info("collector started node={} drivers={} podResources={}", config.nodeName(), streams.size(),
                config.podResourcesSocket());
    }

    @Override
    public void onStreamUp(String driver, HealthApiVersion version) {
        sourceState(driver, SourceStatus.UP, "streaming " + version.registrationName());
        publishHeartbeat();
    }

    @Override
    public void onSnapshot(String driver, List<ObservedDevice> devices) {
        SnapshotDiff diff = diffs.computeIfAbsent(driver,
                d -> new SnapshotDiff(config.clusterName(), config.nodeName(), d, config.defaultHealthTimeout(), clock));
        List<DeviceHealthReport> reports;
        synchronized (diff) {
            reports = diff.apply(devices);
            reports.forEach(publisher::publish);
        }
        LOGGER.debug("dra snapshot driver={} devices={} reports={}", driver, devices.size(), reports.size());
    }

    @Override
    public void onStreamDown(String driver, String reason) {
        SnapshotDiff diff = diffs.get(driver);
        if (diff != null) {
            synchronized (diff) {
                diff.reset();
            }
        }
        sourceState(driver, SourceStatus.DOWN, reason);
        publishHeartbeat();
    }

    @Override
    public void onUnsupported(String driver, String reason) {
        sourceState(driver, SourceStatus.UNSUPPORTED, reason);
        publishHeartbeat();
    }

    private void sourceState(String driver, SourceStatus status, String message) {
        sources.compute(driver, (d, previous) -> previous != null && previous.getState() == status
                ? previous
                : SourceState.newBuilder().setSource(SourceKind.DRA).setSourceName(d).setState(status)
                        .setSince(clock.instant()).setMessage(message).build());
    }

    private void publishHeartbeat() {
        try {
            publisher.publish(NodeHeartbeat.newBuilder()
                    .setCluster(config.clusterName())
                    .setNode(config.nodeName())
                    .setObservedAt(clock.instant())
                    .setSources(new ArrayList<>(sources.values()))
                    .build());
        } catch (RuntimeException e) {
            LOGGER.error("heartbeat failed node={} error=\"{}\"", config.nodeName(), e.toString(), e);
        }
    }

    @Override
    public void close() {
        streams.forEach(DraHealthStream::close);
        if (poller != null) {
            poller.close();
        }
        scheduler.shutdownNow();
        publisher.close();
    }
}
