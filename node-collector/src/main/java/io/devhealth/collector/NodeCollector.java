package io.devhealth.collector;

import io.devhealth.collector.dra.DraHealthStream;
import io.devhealth.collector.dra.DriverStreamListener;
import io.devhealth.collector.dra.DriverStreams;
import io.devhealth.collector.dra.HealthApiVersion;
import io.devhealth.collector.dra.ObservedDevice;
import io.devhealth.collector.dra.PluginRegistration;
import io.devhealth.collector.dra.PluginRegistryWatcher;
import io.devhealth.collector.dra.RegistrationCheck;
import io.devhealth.collector.dra.SnapshotDiff;
import io.devhealth.collector.inventory.ResourceSliceInventory;
import io.devhealth.collector.nvml.NvmlHealthSource;
import io.devhealth.collector.nvml.NvmlListener;
import io.devhealth.collector.ops.CollectorMetrics;
import io.devhealth.collector.podresources.PodResourcesPoller;
import io.devhealth.collector.publish.KafkaReportPublisher;
import io.devhealth.collector.publish.ReportPublisher;
import io.devhealth.collector.taint.DeviceTaintSource;
import io.devhealth.collector.taint.TaintPolicy;
import io.devhealth.runtime.ops.HealthServer;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.NodeHeartbeat;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.avro.SourceState;
import io.devhealth.schema.avro.SourceStatus;
import io.devhealth.schema.serde.SchemaRegistries;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node-collector of one node: DRA health streams, kubelet allocations and ResourceSlice
 * inventory in, reports out through the durable publisher.
 *
 * <p>Sources run on gRPC, informer and scheduler threads; everything they tell is serialized
 * through per-driver {@link SnapshotDiff}s (guarded by their own lock) and handed to the
 * publisher, which never blocks them.
 */
public final class NodeCollector implements DriverStreamListener, AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(NodeCollector.class);
    private static final Duration SENDER_STALL = Duration.ofSeconds(60);

    private final CollectorConfig config;
    private final ReportPublisher publisher;
    private final CollectorMetrics metrics;
    private final Clock clock;
    private final ScheduledExecutorService scheduler;
    private final Map<String, SnapshotDiff> diffs = new ConcurrentHashMap<>();
    private final Map<String, SourceState> sources = new ConcurrentHashMap<>();
    private final List<AutoCloseable> owned = new ArrayList<>();
    private KubernetesClient kubernetes;
    private DriverStreams streams;
    private PluginRegistryWatcher watcher;
    private PodResourcesPoller poller;
    private ResourceSliceInventory inventory;
    private DeviceTaintSource taints;
    private NvmlHealthSource nvml;
    private HealthServer http;

    /** A collector publishing to {@code publisher}; no inventory unless {@link #withInventory} is called. */
    public NodeCollector(CollectorConfig config, ReportPublisher publisher, Clock clock) {
        this(config, publisher, new CollectorMetrics(new SimpleMeterRegistry()), clock);
    }

    public NodeCollector(CollectorConfig config, ReportPublisher publisher, CollectorMetrics metrics, Clock clock) {
        this.config = config;
        this.publisher = publisher;
        this.metrics = metrics;
        this.clock = clock;
        this.scheduler = Executors.newScheduledThreadPool(2, runnable -> {
            Thread thread = new Thread(runnable, "devhealth-collector");
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * A collector publishing to Kafka through its disk spool as {@code config} says, with the
     * Prometheus registry, the ResourceSlice inventory (per {@code inventory.enabled}) and the HTTP
     * endpoint (per {@code http.port}).
     */
    public static NodeCollector create(CollectorConfig config, Clock clock) {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        CollectorMetrics.tagNode(registry, config.clusterName(), config.nodeName());
        CollectorMetrics metrics = new CollectorMetrics(registry);
        metrics.bindDevices(clock, config.defaultHealthTimeout());
        Path spoolDir;
        Path temporary = null;
        if (config.spoolDirectory().isPresent()) {
            spoolDir = config.spoolDirectory().get();
        } else {
            try {
                temporary = Files.createTempDirectory("devhealth-spool-");
            } catch (IOException e) {
                throw new IllegalStateException("cannot create a temporary spool directory", e);
            }
            spoolDir = temporary;
            LOGGER.warn("no {} configured: spooling to a temporary directory that does not survive a restart dir={}",
                    CollectorConfig.SPOOL_DIR, spoolDir);
        }
        KafkaReportPublisher publisher = KafkaReportPublisher.start(config.publisherSettings(spoolDir),
                SchemaRegistries.fromUrl(config.schemaRegistryUrl(), config.originals()), metrics, clock);
        NodeCollector collector = new NodeCollector(config, publisher, metrics, clock);
        if (temporary != null) {
            Path dir = temporary;
            collector.owned.add(() -> deleteRecursively(dir));
        }
        if (inventoryWanted(config, System.getenv())) {
            ConfigBuilder kubeConfig = new ConfigBuilder(Config.autoConfigure(null));
            config.kubernetesMaster().ifPresent(kubeConfig::withMasterUrl);
            KubernetesClient client = new KubernetesClientBuilder().withConfig(kubeConfig.build()).build();
            collector.withInventory(client);
            collector.owned.add(client);
        }
        if (config.httpPort() >= 0) {
            collector.http = HealthServer.start(config.httpHost(), config.httpPort(), config.httpLimits(), registry::scrape,
                    collector::liveness, collector::readiness);
        }
        return collector;
    }

    static boolean inventoryWanted(CollectorConfig config, Map<String, String> env) {
        return switch (config.inventoryEnabled()) {
            case "true" -> true;
            case "false" -> false;
            default -> config.kubernetesMaster().isPresent()
                    || env.containsKey("KUBERNETES_SERVICE_HOST")
                    || env.containsKey("KUBECONFIG")
                    || Files.exists(Path.of(System.getProperty("user.home"), ".kube", "config"));
        };
    }

    /** Publishes the node's ResourceSlice inventory read through {@code client} (not closed by the collector). */
    public NodeCollector withInventory(KubernetesClient client) {
        this.kubernetes = client;
        return this;
    }

    public void start() {
        streams = new DriverStreams(this, scheduler, config.reconnectBackoffMax(),
                new DraHealthStream.StreamLimits(config.grpcMaxInboundMessageBytes(), config.snapshotMaxDevices()));
        for (CollectorConfig.DriverEndpoint endpoint : config.driverEndpoints()) {
            // Static drivers count as the oldest registration: a discovered one of the same driver wins.
            streams.register(new PluginRegistration(Path.of("static:" + endpoint.driverName()), Instant.MIN, streams.nextOrder(),
                    endpoint.driverName(), endpoint.socket(), List.of(endpoint.version().registrationName())));
        }
        if (config.discoveryEnabled()) {
            watcher = new PluginRegistryWatcher(config.registryDirectory(), config.registryRescanInterval(),
                    config.getInfoTimeout(), new RegistrationCheck(config.pluginsDirectory()), metrics::registrationRefused,
                    config.grpcMaxInboundMessageBytes(), streams, scheduler);
            watcher.start();
        }
        poller = new PodResourcesPoller(config.clusterName(), config.nodeName(), config.podResourcesSocket(),
                config.podResourcesPollInterval(), config.allocationsResendInterval(), publisher, clock,
                config.grpcMaxInboundMessageBytes());
        poller.start(scheduler);
        if (kubernetes != null) {
            inventory = new ResourceSliceInventory(kubernetes, config.clusterName(), config.nodeName(), publisher, clock,
                    scheduler, config.inventoryResendInterval());
            inventory.start();
            if (config.taintsEnabled()) {
                taints = new DeviceTaintSource(kubernetes, config.clusterName(), config.nodeName(), inventory,
                        TaintPolicy.withOverrides(config.taintsPolicyFile()), publisher, clock, scheduler, config.taintsTimeout());
                taints.start();
            }
        }
        if (config.nvml().enabled()) {
            startNvml();
        }
        long heartbeatMs = config.heartbeatInterval().toMillis();
        scheduler.scheduleAtFixedRate(this::publishHeartbeat, heartbeatMs, heartbeatMs, TimeUnit.MILLISECONDS);
        LOGGER.info("collector started node={} staticDrivers={} discovery={} registry={} plugins={} podResources={} inventory={} "
                        + "httpPort={}",
                config.nodeName(), config.driverEndpoints().size(), config.discoveryEnabled(), config.registryDirectory(),
                config.pluginsDirectory(),
                config.podResourcesSocket(), inventory != null, http == null ? -1 : http.port());
    }

    /** NVML watches the GPUs directly: on most GPU nodes the failure is seen there first (NVIDIA's DRA driver serves no health). */
    private void startNvml() {
        nvml = NvmlHealthSource.create(config.nvml(), config.clusterName(), config.nodeName(), new NvmlListener() {
            @Override
            public void onReport(DeviceHealthReport report) {
                publisher.publish(report);
            }

            @Override
            public void onSourceState(SourceState state) {
                sources.put(state.getSourceName(), state);
                publishHeartbeat();
            }
        }, clock);
        sources.put(nvml.sourceState().getSourceName(), nvml.sourceState());
        nvml.start();
    }

    /** The port of the HTTP endpoint, when it runs. */
    public Optional<Integer> httpPort() {
        return Optional.ofNullable(http).map(HealthServer::port);
    }

    public ReportPublisher publisher() {
        return publisher;
    }

    /** Which sources the next heartbeat reports, by source name. */
    public Map<String, SourceState> sources() {
        return Map.copyOf(sources);
    }

    @Override
    public void onStreamUp(String driver, HealthApiVersion version) {
        metrics.streamConnected(driver, true);
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
    public void onSnapshotRefused(String driver, DraHealthStream.Refusal refusal, String detail) {
        metrics.snapshotRefused(driver, refusal.label());
    }

    /** Also called when a driver's last registration went away: "source gone", not "devices unhealthy". */
    @Override
    public void onStreamDown(String driver, String reason) {
        SnapshotDiff diff = diffs.get(driver);
        if (diff != null) {
            synchronized (diff) {
                diff.reset();
            }
        }
        metrics.streamConnected(driver, false);
        sourceState(driver, SourceStatus.DOWN, reason);
        publishHeartbeat();
    }

    @Override
    public void onUnsupported(String driver, String reason) {
        SnapshotDiff diff = diffs.get(driver);
        if (diff != null) {
            synchronized (diff) {
                diff.reset();
            }
        }
        metrics.streamConnected(driver, false);
        sourceState(driver, SourceStatus.UNSUPPORTED, reason);
        publishHeartbeat();
    }

    private void sourceState(String driver, SourceStatus status, String message) {
        sources.compute(driver, (d, previous) -> previous != null && previous.getState() == status
                && Objects.equals(previous.getMessage(), message)
                ? previous
                : SourceState.newBuilder().setSource(SourceKind.DRA).setSourceName(d).setState(status)
                        .setSince(previous != null && previous.getState() == status ? previous.getSince() : clock.instant())
                        .setMessage(message).build());
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

    /** Live while the Kafka sender loop turns (a Kafka outage does not make the collector dead: it spools). */
    HealthServer.Check liveness() {
        if (publisher instanceof KafkaReportPublisher kafka) {
            Duration idle = Duration.between(kafka.sender().lastLoopAt(), clock.instant());
            if (idle.compareTo(SENDER_STALL) > 0) {
                return HealthServer.Check.failed("kafka sender stalled for " + idle.toSeconds() + "s");
            }
        }
        return scheduler.isShutdown() ? HealthServer.Check.failed("stopped") : HealthServer.Check.ok("running");
    }

    /** Ready once the spool is open and the plugin registry was scanned once. */
    HealthServer.Check readiness() {
        if (watcher != null && !watcher.firstScanDone()) {
            return HealthServer.Check.failed("plugin registry not scanned yet");
        }
        if (publisher instanceof KafkaReportPublisher kafka) {
            return HealthServer.Check.ok("spool records=" + kafka.spool().records() + " kafkaConnected=" + kafka.sender().connected());
        }
        return HealthServer.Check.ok("running");
    }

    @Override
    public void close() {
        closeQuietly(http);
        closeQuietly(watcher);
        closeQuietly(streams);
        closeQuietly(poller);
        closeQuietly(taints);
        closeQuietly(inventory);
        closeQuietly(nvml);
        scheduler.shutdownNow();
        closeQuietly(publisher);
        for (int i = owned.size() - 1; i >= 0; i--) {
            closeQuietly(owned.get(i));
        }
    }

    private static void closeQuietly(AutoCloseable resource) {
        if (resource == null) {
            return;
        }
        try {
            resource.close();
        } catch (Exception e) {
            LOGGER.warn("close failed resource={} error=\"{}\"", resource.getClass().getSimpleName(), e.toString());
        }
    }

    private static void deleteRecursively(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            LOGGER.warn("temporary spool not deleted dir={} error=\"{}\"", dir, e.toString());
        }
    }
}
