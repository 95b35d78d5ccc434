package io.devhealth.sink;

import io.devhealth.runtime.ops.HealthServer;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.serde.AvroDeserializer;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.schema.serde.SchemaRegistryClient;
import io.devhealth.sink.condition.CachedPods;
import io.devhealth.sink.condition.PodCache;
import io.devhealth.sink.condition.PodEventRecorder;
import io.devhealth.sink.condition.PodStatusWriter;
import io.devhealth.sink.postmortem.ClaimAllocations;
import io.devhealth.sink.postmortem.VerdictPublisher;
import io.devhealth.sink.taints.TaintRuleController;
import io.devhealth.sink.taints.TaintRuleSettings;
import io.devhealth.sink.taints.TaintRuleSink;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sink-apiserver service: {@link PodStatusSink} on its own thread, the {@link PodCache} that its
 * writer and the {@link TerminatedPodWatcher} share,
 * one Kubernetes client whose every request passes {@link ApiCallPolicy}, and the meters in
 * {@link #meterRegistry()} (Prometheus by default).
 */
public final class SinkApp implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(SinkApp.class);

    private final KubernetesClient client;
    private final MeterRegistry registry;
    private final PodStatusSink sink;
    private final DeadLetterPublisher deadLetters;
    private final VerdictPublisher verdicts;
    private final PodCache pods;
    private final PodEventRecorder events;
    private final Thread thread;
    private final SinkConfig config;
    private final KafkaClientMetrics consumerMetrics;
    private final TaintRuleSink taintRules;
    private final Thread taintThread;
    private final KafkaClientMetrics taintConsumerMetrics;
    private HealthServer http;

    public SinkApp(SinkConfig config) {
        this(config, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), Clock.systemUTC());
    }

    public SinkApp(SinkConfig config, MeterRegistry registry, Clock clock) {
        // autoConfigure reads the in-cluster service account or ~/.kube/config.
        this(config, registry, clock, Config.autoConfigure(null));
    }

    /**
     * A sink that reaches the API server as {@code apiServer} says (its URL and credentials decide what
     * the sink may do), e.g. {@code Config.fromKubeconfig(...)} for one outside the cluster.
     */
    public SinkApp(SinkConfig config, MeterRegistry registry, Clock clock, Config apiServer) {
        this.config = config;
        this.registry = registry;
        this.client = new KubernetesClientBuilder().withConfig(kubernetesConfig(config, apiServer)).build();
        SinkMetrics metrics = new SinkMetrics(registry);
        ApiCallPolicy api = new ApiCallPolicy(ApiCallPolicy.Settings.of(config), metrics);
        this.events = new PodEventRecorder(client, api, metrics, clock, config.eventsEnabled(),
                config.eventsPerPodBurst(), config.eventsPerPodInterval(), config.eventsConcurrency(), config.eventsQueue());
        SchemaRegistryClient schemaRegistry = SchemaRegistries.fromUrl(config.schemaRegistryUrl(), config.originals());
        this.verdicts = VerdictPublisher.create(config, schemaRegistry, metrics);
        // One watch of pods for both users, and none where neither is on.
        this.pods = config.podCache() || config.terminationWatch() ? new PodCache(client) : null;
        PodStatusWriter writer = PodStatusWriter.builder(client, clock).settings(PodStatusWriter.Settings.of(config)).api(api)
                .events(events).verdicts(verdicts).metrics(metrics).allocations(new ClaimAllocations(client, api))
                .pods(config.podCache() ? pods : CachedPods.NONE).build();
        AvroDeserializer<PodDeviceStatus> deserializer = AvroSerde.of(PodDeviceStatus.class, schemaRegistry).deserializer();
        String topic = config.topics().podDeviceStatus();
        this.deadLetters = DeadLetterPublisher.create(config, schemaRegistry, clock);
        KafkaConsumer<String, byte[]> consumer = consumer(config, config.groupId(), "earliest");
        // The consumer's own meters: its lag on pod-device-status above all.
        this.consumerMetrics = new KafkaClientMetrics(consumer);
        consumerMetrics.bindTo(registry);
        this.sink = new PodStatusSink(consumer, topic, bytes -> deserializer.deserialize(topic, bytes), writer, deadLetters,
                new PodStatusMemory(config.trackedPodsMax()), new TerminationSchedule(config.trackedPodsMax()), metrics, clock, config);
        if (config.terminationWatch()) {
            pods.addEventHandler(new TerminatedPodWatcher(sink::onPodTerminated, sink::onPodDeleted));
        }
        this.thread = new Thread(sink, "devhealth-sink");
        TaintRuleSettings taints = config.taintRules();
        if (taints.enabled()) {
            TaintRuleController controller = TaintRuleController.of(client, api, clock, taints, metrics, config.retryMaxInterval());
            AvroDeserializer<HealthTransition> transitions = AvroSerde.of(HealthTransition.class, schemaRegistry).deserializer();
            String transitionsTopic = config.topics().healthTransitions();
            KafkaConsumer<String, byte[]> transitionsConsumer = consumer(config, taints.groupId(), "latest");
            // Its lag on health-transitions, next to the status consumer's (told apart by client.id).
            this.taintConsumerMetrics = new KafkaClientMetrics(transitionsConsumer);
            taintConsumerMetrics.bindTo(registry);
            this.taintRules = new TaintRuleSink(transitionsConsumer, transitionsTopic,
                    bytes -> transitions.deserialize(transitionsTopic, bytes), controller, deadLetters, metrics, clock,
                    config.retryMaxInterval());
            this.taintThread = new Thread(taintRules, "devhealth-sink-taints");
            LOGGER.info("retry elsewhere on: devicetaintrules for unhealthy devices dryRun={} minHoldMs={} maxPerNode={} "
                            + "breakerNodeFraction={} breakerWindowMs={} group={}", taints.dryRun(), taints.minHold().toMillis(),
                    taints.maxPerNode(), taints.breakerNodeFraction(), taints.breakerWindow().toMillis(), taints.groupId());
        } else {
            this.taintRules = null;
            this.taintThread = null;
            this.taintConsumerMetrics = null;
        }
    }

    /** A consumer of the sink's topics in {@code groupId}, starting where {@link #consumerProperties} says. */
    static KafkaConsumer<String, byte[]> consumer(SinkConfig config, String groupId, String newGroupStartsAt) {
        // Values stay bytes until a writer decodes them, so an undecodable one is dead-lettered as it was.
        return new KafkaConsumer<>(consumerProperties(config, groupId, newGroupStartsAt), new StringDeserializer(),
                new ByteArrayDeserializer());
    }

    /**
     * @param newGroupStartsAt where a group with no committed offset starts ({@code auto.offset.reset}) unless the
     *        configuration says otherwise: {@code earliest} for pod statuses (a compacted topic: every pod's latest
     *        status), {@code latest} for retry elsewhere's health transitions, which are events: replaying a topic's
     *        history when the feature is first turned on would taint devices that failed days ago and have
     *        recovered since, and could trip the fleet breaker at once
     */
    static Map<String, Object> consumerProperties(SinkConfig config, String groupId, String newGroupStartsAt) {
        Map<String, Object> props = new HashMap<>(config.kafkaClientProperties());
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.putIfAbsent(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, newGroupStartsAt);
        props.putIfAbsent(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        return props;
    }

    static Config kubernetesConfig(SinkConfig config, Config apiServer) {
        ConfigBuilder builder = new ConfigBuilder(apiServer)
                // ApiCallPolicy is the only retry (with Retry-After and jitter); fabric8's own would multiply it.
                .withRequestRetryBackoffLimit(0)
                .withRequestTimeout((int) config.apiRequestTimeout().toMillis());
        if (!config.kubernetesMaster().isEmpty()) {
            builder.withMasterUrl(config.kubernetesMaster());
        }
        return builder.build();
    }

    public void start() {
        if (pods != null) {
            pods.start();
        }
        thread.start();
        if (taintThread != null) {
            taintThread.start();
        }
        if (config.httpPort() >= 0) {
            http = HealthServer.start(config.httpHost(), config.httpPort(), config.httpLimits(),
                    () -> registry instanceof PrometheusMeterRegistry prometheus ? prometheus.scrape() : "",
                    this::liveness, this::liveness);
        }
        LOGGER.info("sink started httpPort={}", http == null ? -1 : http.port());
    }

    /**
     * Alive and ready while the consume loop runs. An unreachable API server pauses consumption but is
     * not a reason to restart the sink (metrics say so instead).
     */
    private HealthServer.Check liveness() {
        if (taintThread != null && !taintThread.isAlive()) {
            return HealthServer.Check.failed("health-transitions consume loop stopped");
        }
        return thread.isAlive() ? HealthServer.Check.ok("consuming") : HealthServer.Check.failed("consume loop stopped");
    }

    /** The port of the HTTP endpoint, when it runs. */
    public java.util.Optional<Integer> httpPort() {
        return java.util.Optional.ofNullable(http).map(HealthServer::port);
    }

    /** The sink's meters; a {@code PrometheusMeterRegistry} unless another was given. */
    public MeterRegistry meterRegistry() {
        return registry;
    }

    @Override
    public void close() throws InterruptedException {
        if (http != null) {
            http.close();
        }
        if (pods != null) {
            pods.close();
        }
        sink.close();
        if (taintRules != null) {
            taintRules.close();
            taintThread.join(30_000);
        }
        thread.join(30_000);
        events.close();
        consumerMetrics.close();
        if (taintConsumerMetrics != null) {
            taintConsumerMetrics.close();
        }
        deadLetters.close();
        verdicts.close();
        client.close();
    }
}
