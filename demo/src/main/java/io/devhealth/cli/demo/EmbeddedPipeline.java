package io.devhealth.cli.demo;

import io.devhealth.collector.CollectorConfig;
import io.devhealth.collector.NodeCollector;
import io.devhealth.collector.nvml.NvmlConfig;
import io.devhealth.processor.ProcessorConfig;
import io.devhealth.query.QueryConfig;
import io.devhealth.query.QueryableProcessor;
import io.devhealth.query.access.QuerySecurityConfig;
import io.devhealth.runtime.config.ServiceConfig;
import io.devhealth.schema.Topics;
import io.devhealth.simulators.dra.DeviceState;
import io.devhealth.simulators.dra.FakeDraDriver;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.simulators.kube.FleetKubernetesApi;
import io.devhealth.simulators.kubelet.FakeKubelet;
import io.devhealth.sink.SinkApp;
import io.devhealth.sink.SinkConfig;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole pipeline in one JVM, with real components and simulated hardware: an in-process Kafka
 * broker, an in-memory schema registry, a local Kubernetes API endpoint, and per simulated node a
 * fake DRA driver and a fake kubelet on unix sockets feeding a real node-collector; then the real
 * stream-processor and sink. Used by {@code devhealth demo} and by the end-to-end tests.
 *
 * <p>Every service serves {@code /metrics} on a loopback port of its own ({@link #metricsTargets()}),
 * as it does in a cluster.
 */
public final class EmbeddedPipeline implements AutoCloseable {

    /** The services of the pipeline, each a Kafka client of its own. */
    public enum Service { COLLECTOR, PROCESSOR, SINK }

    private static final Logger LOGGER = LoggerFactory.getLogger(EmbeddedPipeline.class);

    public static final String DRIVER = "gpu.devhealth.example";

    /**
     * What to run. Built with {@link #builder(Path)}.
     *
     * @param workDir keep it short: unix socket paths must fit in 108 bytes
     * @param terminationWindow how long after a container ends an Unhealthy report still applies (processor and sink)
     * @param serviceOptions options given to all three services (collector, processor, sink) on top of
     *        the pipeline's own, e.g. a real {@code schema.registry.url} with its TLS and credentials
     *        instead of the in-memory registry; empty for the demo
     */
    public record Options(int nodes, int devicesPerNode, Path workDir, int partitions, String topicPrefix,
                          Duration terminationWindow, Map<String, String> serviceOptions) {

        public static final int DEFAULT_NODES = 3;
        public static final int DEFAULT_DEVICES_PER_NODE = 4;
        public static final int DEFAULT_PARTITIONS = 3;

        public Options {
            serviceOptions = Map.copyOf(serviceOptions);
        }

        /**
         * {@value #DEFAULT_NODES} nodes of {@value #DEFAULT_DEVICES_PER_NODE} devices, {@value #DEFAULT_PARTITIONS}
         * partitions, the default topic prefix, the sink's default termination window, no service options.
         */
        public static Builder builder(Path workDir) {
            return new Builder(workDir);
        }

        /** Service options can hold passwords: only their keys are shown. */
        @Override
        public String toString() {
            return "Options[nodes=" + nodes + ", devicesPerNode=" + devicesPerNode + ", workDir=" + workDir
                    + ", partitions=" + partitions + ", topicPrefix=" + topicPrefix + ", terminationWindow=" + terminationWindow
                    + ", serviceOptions=" + new java.util.TreeSet<>(serviceOptions.keySet()) + "]";
        }

        public static final class Builder {
            private final Path workDir;
            private int nodes = DEFAULT_NODES;
            private int devicesPerNode = DEFAULT_DEVICES_PER_NODE;
            private int partitions = DEFAULT_PARTITIONS;
            private String topicPrefix = Topics.DEFAULT_PREFIX;
            private Duration terminationWindow = SinkConfig.DEFAULT_TERMINATION_WINDOW;
            private Map<String, String> serviceOptions = Map.of();

            private Builder(Path workDir) {
                this.workDir = workDir;
            }

            public Builder nodes(int count) {
                this.nodes = count;
                return this;
            }

            public Builder devicesPerNode(int count) {
                this.devicesPerNode = count;
                return this;
            }

            public Builder partitions(int count) {
                this.partitions = count;
                return this;
            }

            /** Pipelines sharing one broker need their own topics (each has its own in-memory schema registry). */
            public Builder topicPrefix(String prefix) {
                this.topicPrefix = prefix;
                return this;
            }

            public Builder terminationWindow(Duration window) {
                this.terminationWindow = window;
                return this;
            }

            /** Options every service gets, overriding the pipeline's (see {@link Options#serviceOptions()}). */
            public Builder serviceOptions(Map<String, String> options) {
                this.serviceOptions = options;
                return this;
            }

            public Options build() {
                return new Options(nodes, devicesPerNode, workDir, partitions, topicPrefix, terminationWindow, serviceOptions);
            }
        }
    }

    /**
     * One simulated GPU node: its DRA driver (discovered by the collector through the node's plugin
     * registry directory), its kubelet, and the real collector reading them. A driver streams full
     * snapshots; {@link #pulse(Duration)} makes it re-send its current one periodically, as real drivers
     * do so that devices do not time out, and {@link #silence()} stops that, as a hung driver would.
     */
    public static final class SimulatedNode {
        private final String name;
        private final FakeDraDriver driver;
        private final FakeKubelet kubelet;
        private final NodeCollector collector;
        private volatile boolean silent;

        SimulatedNode(String name, FakeDraDriver driver, FakeKubelet kubelet, NodeCollector collector) {
            this.name = name;
            this.driver = driver;
            this.kubelet = kubelet;
            this.collector = collector;
        }

        public String name() {
            return name;
        }

        public FakeDraDriver driver() {
            return driver;
        }

        public FakeKubelet kubelet() {
            return kubelet;
        }

        public NodeCollector collector() {
            return collector;
        }

        /** The device names of this node's driver pool (the pool is named after the node, as drivers do). */
        public String pool() {
            return name;
        }

        /** The name of the i-th device of this node. */
        public static String device(int index) {
            return "gpu-" + index;
        }

        /** Re-sends the driver's current snapshot every {@code period} unless {@link #silence() silenced}. */
        void pulse(ScheduledExecutorService scheduler, Duration period) {
            scheduler.scheduleAtFixedRate(() -> {
                if (!silent && !driver.currentSnapshot().isEmpty()) {
                    driver.report(driver.currentSnapshot());
                }
            }, period.toMillis(), period.toMillis(), TimeUnit.MILLISECONDS);
        }

        /** The driver stops sending (its stream stays open): the processor must notice the silence itself. */
        public void silence() {
            silent = true;
        }

        /** The driver sends again. */
        public void resume() {
            silent = false;
            driver.report(driver.currentSnapshot());
        }
    }

    /** A snapshot in which every device of {@code pool} is healthy. */
    public static List<DeviceState> allHealthy(String pool, int devices) {
        return IntStream.range(0, devices).mapToObj(i -> DeviceState.healthy(pool, SimulatedNode.device(i))).toList();
    }

    private final Options options;
    private final List<AutoCloseable> resources = new ArrayList<>();
    private final ScheduledExecutorService pulses = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "devhealth-demo-driver-pulse");
        thread.setDaemon(true);
        return thread;
    });
    private final List<SimulatedNode> nodes = new ArrayList<>();
    private final Topics topics;
    private EmbeddedKafkaCluster kafka;
    /** How each service reaches Kafka: bootstrap servers plus security settings, as Kafka client properties. */
    private Map<Service, Map<String, Object>> kafkaClients;
    private FleetKubernetesApi kube;
    /** k8s/base/sink-apiserver/devicepostmortem-crd.yaml, copied into the jar by the build. */
    private static final String POST_MORTEM_CRD = "/io/devhealth/cli/demo/devicepostmortem-crd.yaml";
    private String registryUrl;
    private QueryableProcessor processor;
    private SinkApp sink;

    private EmbeddedPipeline(Options options) {
        this.options = options;
        this.topics = new Topics(options.topicPrefix());
    }

    /** Starts the pipeline on a new in-process broker (PLAINTEXT), which it stops on close. */
    public static EmbeddedPipeline start(Options options) throws IOException {
        return start(options, null, null);
    }

    /**
     * Starts the pipeline on an existing broker, with the client settings every service uses to reach
     * it (e.g. SASL_SSL or mTLS from {@code KafkaSecurity}); the broker is left running on close.
     */
    public static EmbeddedPipeline start(Options options, EmbeddedKafkaCluster kafka, Map<String, Object> kafkaClient)
            throws IOException {
        Map<Service, Map<String, Object>> clients = new EnumMap<>(Service.class);
        for (Service service : Service.values()) {
            clients.put(service, kafkaClient);
        }
        return startPerService(options, kafka, clients);
    }

    /**
     * Starts the pipeline on an existing broker, each service with Kafka client settings of its own
     * (e.g. one SCRAM principal per service, as a deployment with ACLs has); the broker is left running
     * on close.
     *
     * @param kafkaClients the client settings of every {@link Service}
     */
    public static EmbeddedPipeline startPerService(Options options, EmbeddedKafkaCluster kafka,
                                                   Map<Service, Map<String, Object>> kafkaClients) throws IOException {
        if (!kafkaClients.keySet().containsAll(EnumSet.allOf(Service.class))) {
            throw new IllegalArgumentException("Kafka client settings for every service are needed, got " + kafkaClients.keySet());
        }
        EmbeddedPipeline pipeline = new EmbeddedPipeline(options);
        pipeline.kafka = kafka;
        pipeline.kafkaClients = new EnumMap<>(kafkaClients);
        try {
            pipeline.startAll();
        } catch (IOException | RuntimeException e) {
            pipeline.close();
            throw e;
        }
        return pipeline;
    }

    private void startAll() throws IOException {
        Files.createDirectories(options.workDir());
        if (kafka == null) {
            kafka = track(EmbeddedKafkaCluster.start());
            kafkaClients = new EnumMap<>(Service.class);
            for (Service service : Service.values()) {
                kafkaClients.put(service, kafka.clientProperties());
            }
        }
        kafka.createTopics(options.partitions(), topics.nodeEvents(), topics.healthTransitions(), topics.podVerdicts(), topics.fleetStats(), topics.deadLetters());
        kafka.createCompactedTopics(options.partitions(), topics.podDeviceStatus());
        registryUrl = options.serviceOptions().getOrDefault(ServiceConfig.SCHEMA_REGISTRY_URL, "mem://pipeline-" + UUID.randomUUID());
        kube = track(FleetKubernetesApi.start());
        // The CRD that ships in k8s/ (packaged into this jar): kubectl then prints the record's printer columns.
        try (InputStream crd = EmbeddedPipeline.class.getResourceAsStream(POST_MORTEM_CRD)) {
            kube.client().apiextensions().v1().customResourceDefinitions()
                    .resource(kube.client().getKubernetesSerialization().unmarshal(crd, CustomResourceDefinition.class)).create();
        }
        LOGGER.info("embedded infrastructure up kafka={} kubernetes={}", kafka.bootstrapServers(), kube.url());

        // The demo's query API has no credentials to hand out: it opts out of authentication, on loopback only.
        LOGGER.warn("demo query API without authentication or TLS, on loopback only setting={}=true",
                QuerySecurityConfig.INSECURE);
        processor = track(QueryableProcessor.of(withKafka(Service.PROCESSOR, Map.of(
                ProcessorConfig.SCHEMA_REGISTRY_URL, registryUrl,
                ProcessorConfig.APPLICATION_ID, "devhealth-processor-" + UUID.randomUUID().toString().substring(0, 8),
                ProcessorConfig.STATE_DIR, options.workDir().resolve("state").toString(),
                ProcessorConfig.TERMINATION_WINDOW_MS, Long.toString(options.terminationWindow().toMillis()),
                // Several pipelines can share a machine (tests, demos): an ephemeral loopback port each.
                QueryConfig.BIND_ADDRESS, "127.0.0.1",
                QueryConfig.PORT, "0",
                QueryConfig.ADVERTISED_HOST, "127.0.0.1",
                QuerySecurityConfig.INSECURE, "true",
                ProcessorConfig.HTTP_HOST, "127.0.0.1",
                ProcessorConfig.HTTP_PORT, "0"))));
        processor.start();

        sink = track(new SinkApp(new SinkConfig(withKafka(Service.SINK, Map.of(
                SinkConfig.SCHEMA_REGISTRY_URL, registryUrl,
                SinkConfig.TERMINATION_WINDOW_MS, Long.toString(options.terminationWindow().toMillis()),
                SinkConfig.KUBERNETES_MASTER, kube.url(),
                SinkConfig.HTTP_HOST, "127.0.0.1",
                SinkConfig.HTTP_PORT, "0")))));
        sink.start();

        for (int i = 1; i <= options.nodes(); i++) {
            nodes.add(startNode("node-" + i));
        }
    }

    private SimulatedNode startNode(String name) throws IOException {
        Path dir = Files.createDirectories(options.workDir().resolve(name));
        Path registry = Files.createDirectories(dir.resolve("registry"));
        // The kubelet's layout: the driver's socket in its own plugin directory, where the collector accepts it.
        Path plugins = dir.resolve("plugins");
        FakeDraDriver driver = track(FakeDraDriver.builder()
                .driverName(DRIVER)
                .serviceSocket(plugins.resolve(DRIVER).resolve("dra.sock"))
                .registrationDir(registry)
                .healthVersions(Set.of(FakeDraDriver.V1ALPHA1))
                .start());
        FakeKubelet kubelet = track(FakeKubelet.start(dir.resolve("kubelet.sock")));
        driver.report(allHealthy(name, options.devicesPerNode()));
        NodeCollector collector = track(NodeCollector.create(new CollectorConfig(withKafka(Service.COLLECTOR, Map.ofEntries(
                Map.entry(CollectorConfig.NODE_NAME, name),
                Map.entry(CollectorConfig.SCHEMA_REGISTRY_URL, registryUrl),
                // The driver is found as on a real node: its registration socket in the plugin registry.
                Map.entry(CollectorConfig.DRA_REGISTRY_DIR, registry.toString()),
                Map.entry(CollectorConfig.DRA_PLUGINS_DIR, plugins.toString()),
                Map.entry(CollectorConfig.DRA_REGISTRY_RESCAN_INTERVAL, "1000"),
                Map.entry(CollectorConfig.SPOOL_DIR, dir.resolve("spool").toString()),
                Map.entry(CollectorConfig.INVENTORY_ENABLED, "false"),
                Map.entry(NvmlConfig.ENABLED, "false"),
                Map.entry(CollectorConfig.POD_RESOURCES_SOCKET, kubelet.socket().toString()),
                Map.entry(CollectorConfig.POD_RESOURCES_POLL_INTERVAL, "500"),
                Map.entry(CollectorConfig.HEARTBEAT_INTERVAL, "2000"),
                Map.entry(CollectorConfig.HTTP_HOST, "127.0.0.1"),
                Map.entry(CollectorConfig.HTTP_PORT, "0")))), Clock.systemUTC()));
        collector.start();
        SimulatedNode node = new SimulatedNode(name, driver, kubelet, collector);
        node.pulse(pulses, Duration.ofSeconds(1));
        return node;
    }

    /**
     * A service's settings plus the Kafka client settings, as {@code kafka.*} options (ServiceConfig
     * passes them through), then {@link Options#serviceOptions()}.
     */
    private Map<String, Object> withKafka(Service service, Map<String, String> settings) {
        Map<String, Object> all = new java.util.HashMap<>(settings);
        // The same key in every service's configuration.
        all.put(ProcessorConfig.TOPIC_PREFIX, options.topicPrefix());
        kafkaClients.get(service).forEach((key, value) -> all.put(ServiceConfig.KAFKA_PREFIX + key, String.valueOf(value)));
        all.putAll(options.serviceOptions());
        return all;
    }

    private <T extends AutoCloseable> T track(T resource) {
        resources.add(resource);
        return resource;
    }

    public List<SimulatedNode> nodes() {
        return List.copyOf(nodes);
    }

    public SimulatedNode node(String name) {
        return nodes.stream().filter(n -> n.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no simulated node " + name));
    }

    public KubernetesClient kubernetes() {
        return kube.client();
    }

    public String kubernetesUrl() {
        return kube.url();
    }

    /** The broker the pipeline runs on (its own, or the one it was given). */
    public EmbeddedKafkaCluster kafka() {
        return kafka;
    }

    public String bootstrapServers() {
        return String.valueOf(kafkaClients.get(Service.PROCESSOR).get("bootstrap.servers"));
    }

    /** The Kafka client settings the processor uses (bootstrap servers and security; every service's unless started with its own). */
    public Map<String, Object> kafkaClientProperties() {
        return Map.copyOf(kafkaClients.get(Service.PROCESSOR));
    }

    /**
     * Where each service serves {@code /metrics}, as {@code host:port} by job ({@code collector}: one per
     * node, {@code processor}: its operations port, {@code sink}): what a Prometheus scrapes.
     */
    public Map<String, List<String>> metricsTargets() {
        Map<String, List<String>> targets = new LinkedHashMap<>();
        targets.put("collector", nodes.stream().map(node -> "127.0.0.1:" + node.collector().httpPort().orElseThrow()).toList());
        targets.put("processor", List.of("127.0.0.1:" + processor.httpPort().orElseThrow()));
        targets.put("sink", List.of("127.0.0.1:" + sink.httpPort().orElseThrow()));
        return Collections.unmodifiableMap(targets);
    }

    /** The processor's post-mortem query API, for {@code devhealth query --server}. */
    public String queryUrl() {
        return "http://127.0.0.1:" + processor.queryAddress().port();
    }

    public String schemaRegistryUrl() {
        return registryUrl;
    }

    public Topics topics() {
        return topics;
    }

    /** Stops everything in reverse order of start, and deletes the work directory. */
    @Override
    public void close() {
        pulses.shutdownNow();
        for (int i = resources.size() - 1; i >= 0; i--) {
            try {
                resources.get(i).close();
            } catch (Exception e) {
                LOGGER.warn("close failed resource={} error=\"{}\"", resources.get(i).getClass().getSimpleName(), e.toString());
            }
        }
        resources.clear();
        deleteRecursively(options.workDir());
    }

    private static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            LOGGER.warn("work directory not deleted dir={} error=\"{}\"", dir, e.toString());
        }
    }
}
