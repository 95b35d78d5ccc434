package io.devhealth.cli.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.devhealth.cli.Devhealth;
import io.devhealth.collector.CollectorConfig;
import io.devhealth.collector.NodeCollector;
import io.devhealth.collector.nvml.NvmlConfig;
import io.devhealth.processor.ProcessorConfig;
import io.devhealth.query.QueryConfig;
import io.devhealth.query.QueryableProcessor;
import io.devhealth.query.access.QuerySecurityConfig;
import io.devhealth.runtime.config.ServiceConfig;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.TerminatedPod;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.KubeBinaries;
import io.devhealth.simulators.realkube.Kubectl;
import io.devhealth.simulators.realkube.RealNode;
import io.devhealth.simulators.realkube.Waits;
import io.devhealth.sink.SinkApp;
import io.devhealth.sink.SinkConfig;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.serialization.Deserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;

/**
 * The whole pipeline on a real node ({@code io.devhealth.simulators.realkube}): the production node-collector reading the real kubelet's
 * plugin registry and PodResources socket and the real DRA driver's {@code DRAResourceHealth} stream,
 * the production stream-processor, and the production sink writing to the real API server as the
 * ServiceAccount that the shipped {@code k8s/base/sink-apiserver/rbac.yaml} binds — over a real Kafka
 * broker, with topics of its own. Only the devices and the container runtime are simulated (see
 * {@code docs/TEST-CLUSTER.md}).
 *
 * <p>Services are started as {@code main} starts them, from their typed configuration; the options a
 * caller gives override the pipeline's. The integration tests on the real node run it, and so does
 * {@code devhealth demo --real-kubernetes}.
 */
public final class RealNodePipeline implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(RealNodePipeline.class);
    private static final Duration START = Duration.ofSeconds(90);
    private static final String NAMESPACE = "devhealth";
    private static final String COLLECTOR_NAMESPACE = "devhealth-node";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final List<AutoCloseable> resources = new ArrayList<>();
    private final Topics topics;
    private final MeterRegistry sinkMeters = new SimpleMeterRegistry();
    private final String registryName = "realnode-" + UUID.randomUUID();
    private EmbeddedKafkaCluster kafka;
    private QueryableProcessor processor;
    private SinkApp sink;
    private NodeCollector collector;

    private RealNodePipeline(String topicPrefix) {
        this.topics = new Topics(topicPrefix);
    }

    /**
     * Applies the shipped namespace, CRD and RBAC, creates the pipeline's topics on {@code kafka} and
     * starts the three services for {@code node}.
     *
     * @param processorOptions e.g. {@link ProcessorConfig#FLAP_THRESHOLD}
     */
    public static RealNodePipeline start(ControlPlane plane, RealNode node, EmbeddedKafkaCluster kafka, Path workDir,
                                  Map<String, String> processorOptions, Map<String, String> sinkOptions) {
        RealNodePipeline pipeline = new RealNodePipeline(EmbeddedKafkaCluster.uniqueName("realnode") + ".");
        try {
            pipeline.startAll(plane, node, kafka, workDir, processorOptions, sinkOptions);
            return pipeline;
        } catch (RuntimeException e) {
            pipeline.close();
            throw e;
        }
    }

    /**
     * The shipped objects the services need: their namespace, ServiceAccounts, RBAC, the sink's
     * admission policy and the CRD, applied as an operator applies them ({@code kubectl apply
     * --server-side}, so that the same field manager owns them as when {@code ShippedManifestsIT}
     * applies all of {@code k8s/} in the same cluster).
     */
    public static void applyShippedManifests(ControlPlane plane) {
        Kubectl kubectl = Kubectl.admin(plane);
        Path base = KubeBinaries.repositoryRoot().resolve("k8s/base");
        // The admission policy too: the sink's writes must pass the guard it ships with.
        for (String file : List.of("namespace.yaml", "node-collector/namespace.yaml", "sink-apiserver/devicepostmortem-crd.yaml",
                "sink-apiserver/rbac.yaml", "sink-apiserver/admissionpolicy.yaml", "node-collector/rbac.yaml")) {
            kubectl.ok("apply", "--server-side", "-f", base.resolve(file).toString());
        }
        // The ServiceAccount's namespace comes from the kustomization, as `kubectl apply -k` sets it.
        kubectl.ok("apply", "--server-side", "-n", COLLECTOR_NAMESPACE, "-f", base.resolve("node-collector/serviceaccount.yaml").toString());
        KubernetesClient admin = plane.adminClient();
        Waits.until("DevicePostMortem CRD established", START, null, () -> {
            CustomResourceDefinition crd = admin.apiextensions().v1().customResourceDefinitions()
                    .withName("devicepostmortems.devhealth.io").get();
            return crd != null && crd.getStatus() != null && crd.getStatus().getConditions().stream()
                    .anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus()));
        });
    }

    /**
     * Sink options that turn on retry elsewhere (the sink's DeviceTaintRules) on this one-node cluster,
     * after applying the RBAC of its optional component as it ships: rules held at least {@code minHold},
     * consumed by group {@code groupId}, and the circuit breaker's node fraction at 1.0, since on one node
     * any device is all of the fleet's nodes (the breaker has unit tests of its own).
     */
    public static Map<String, String> retryElsewhere(ControlPlane plane, String groupId, Duration minHold) {
        Kubectl.admin(plane).ok("apply", "--server-side", "-f",
                KubeBinaries.repositoryRoot().resolve("k8s/components/device-taint-rules/rbac.yaml").toString());
        return Map.of(SinkConfig.TAINT_RULES_ENABLED, "true",
                SinkConfig.TAINT_RULES_GROUP_ID, groupId,
                SinkConfig.TAINT_RULES_MIN_HOLD_MS, Long.toString(minHold.toMillis()),
                SinkConfig.TAINT_RULES_BREAKER_NODE_FRACTION, "1.0");
    }

    /**
     * Waits until the consumer group {@code groupId} holds partitions. A new retry-elsewhere group starts
     * at the end of health-transitions, so it acts only on failures that come after this.
     */
    public void awaitAssigned(String groupId, Duration timeout) {
        Waits.until("consumer group " + groupId + " holds its partitions", timeout, null, () -> {
            try {
                return kafka.admin().describeConsumerGroups(List.of(groupId)).all().get().get(groupId).members().stream()
                        .anyMatch(member -> !member.assignment().topicPartitions().isEmpty());
            } catch (ExecutionException e) {
                throw new IllegalStateException(e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        });
    }

    private void startAll(ControlPlane plane, RealNode node, EmbeddedKafkaCluster kafka, Path workDir,
                          Map<String, String> processorOptions, Map<String, String> sinkOptions) {
        applyShippedManifests(plane);
        try {
            Files.createDirectories(workDir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        int partitions = 2;
        kafka.createTopics(partitions, topics.nodeEvents(), topics.healthTransitions(), topics.podVerdicts(), topics.fleetStats(),
                topics.deadLetters());
        kafka.createCompactedTopics(partitions, topics.podDeviceStatus());
        this.kafka = kafka;
        String registry = "mem://" + registryName;

        Map<String, String> processorSettings = new HashMap<>(Map.of(
                ProcessorConfig.SCHEMA_REGISTRY_URL, registry,
                ProcessorConfig.APPLICATION_ID, "devhealth-processor-" + UUID.randomUUID().toString().substring(0, 8),
                ProcessorConfig.STATE_DIR, workDir.resolve("state").toString(),
                QueryConfig.BIND_ADDRESS, "127.0.0.1",
                QueryConfig.PORT, "0",
                QueryConfig.ADVERTISED_HOST, "127.0.0.1",
                // Loopback only, and the test reads what a user's `devhealth query` reads.
                QuerySecurityConfig.INSECURE, "true",
                ProcessorConfig.HTTP_HOST, "127.0.0.1",
                ProcessorConfig.HTTP_PORT, "-1"));
        processorSettings.putAll(processorOptions);
        processor = track(QueryableProcessor.of(withKafka(kafka, processorSettings)));
        processor.start();

        Map<String, String> sinkSettings = new HashMap<>(Map.of(
                SinkConfig.SCHEMA_REGISTRY_URL, registry,
                SinkConfig.GROUP_ID, "devhealth-sink-" + UUID.randomUUID().toString().substring(0, 8),
                SinkConfig.HTTP_PORT, "-1"));
        sinkSettings.putAll(sinkOptions);
        sink = track(new SinkApp(new SinkConfig(withKafka(kafka, sinkSettings)), sinkMeters, Clock.systemUTC(),
                kubeconfig(plane.kubeconfigFor(NAMESPACE, "devhealth-sink"))));
        sink.start();

        collector = track(NodeCollector.create(new CollectorConfig(withKafka(kafka, Map.ofEntries(
                Map.entry(CollectorConfig.NODE_NAME, node.name()),
                Map.entry(CollectorConfig.SCHEMA_REGISTRY_URL, registry),
                Map.entry(CollectorConfig.DRA_REGISTRY_DIR, node.pluginRegistryDirectory().toString()),
                Map.entry(CollectorConfig.DRA_PLUGINS_DIR, node.pluginsDirectory().toString()),
                Map.entry(CollectorConfig.DRA_REGISTRY_RESCAN_INTERVAL, "500"),
                Map.entry(CollectorConfig.POD_RESOURCES_SOCKET, node.podResourcesSocket().toString()),
                Map.entry(CollectorConfig.POD_RESOURCES_POLL_INTERVAL, "500"),
                Map.entry(CollectorConfig.SPOOL_DIR, workDir.resolve("spool").toString()),
                // The inventory client is the collector's own ServiceAccount, given below.
                Map.entry(CollectorConfig.INVENTORY_ENABLED, "false"),
                Map.entry(NvmlConfig.ENABLED, "false"),
                Map.entry(CollectorConfig.HTTP_PORT, "-1")))), Clock.systemUTC()));
        // The control plane closes the clients it hands out; closing this one here too closed it twice, and
        // the second close met a Vert.x event loop already shut down (an ERROR from netty at every stop).
        KubernetesClient inventory = plane.clientFor(COLLECTOR_NAMESPACE, "node-collector");
        collector.withInventory(inventory);
        collector.start();
        LOGGER.info("pipeline started node={} topics={} queryUrl={}", node.name(), topics.nodeEvents(), queryUrl());
    }

    private static Config kubeconfig(Path file) {
        try {
            return Config.fromKubeconfig(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Map<String, Object> withKafka(EmbeddedKafkaCluster kafka, Map<String, String> settings) {
        Map<String, Object> all = new HashMap<>(settings);
        all.put(ServiceConfig.TOPIC_PREFIX, topics.prefix());
        kafka.clientProperties().forEach((key, value) -> all.put(ServiceConfig.KAFKA_PREFIX + key, String.valueOf(value)));
        return all;
    }

    private <T extends AutoCloseable> T track(T resource) {
        resources.add(resource);
        return resource;
    }

    /** The processor's query API, as {@code devhealth query --server} takes it. */
    public String queryUrl() {
        return "http://127.0.0.1:" + processor.queryAddress().port();
    }

    /** {@code devhealth query <args> -o json} against the processor, as a user runs it; fails on a non-zero exit. */
    public JsonNode query(String... args) {
        Answer answer = ask(args);
        if (answer.exit() != 0) {
            throw new AssertionError("devhealth " + String.join(" ", answer.command()) + " exited " + answer.exit() + ": " + answer.err());
        }
        return answer.json();
    }

    /** Like {@link #query}, but empty where the command exits non-zero (e.g. the pod is not known yet). */
    public Optional<JsonNode> tryQuery(String... args) {
        Answer answer = ask(args);
        return answer.exit() == 0 ? Optional.of(answer.json()) : Optional.empty();
    }

    private record Answer(List<String> command, int exit, JsonNode json, String err) {}

    private Answer ask(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new Devhealth()).setOut(new PrintWriter(out)).setErr(new PrintWriter(err));
        List<String> full = new ArrayList<>(List.of("query", "--server", queryUrl(), "-o", "json"));
        full.addAll(List.of(args));
        int exit = cli.execute(full.toArray(String[]::new));
        if (exit != 0) {
            return new Answer(full, exit, null, err.toString());
        }
        try {
            return new Answer(full, exit, JSON.readTree(out.toString()), err.toString());
        } catch (IOException e) {
            throw new IllegalStateException("devhealth " + String.join(" ", full) + " printed no JSON: " + out, e);
        }
    }

    public Topics topics() {
        return topics;
    }

    /** Reads the values of pod-verdicts, through the pipeline's schema registry. */
    public Deserializer<TerminatedPod> verdictDeserializer() {
        return AvroSerde.of(TerminatedPod.class, SchemaRegistries.inMemory(registryName)).deserializer();
    }

    /** The value of one of the sink's counters ({@code devhealth.sink.<name>}), summed over its tags. */
    public double sinkCount(String name, String... tags) {
        return sinkMeters.find("devhealth.sink." + name).tags(tags).counters().stream().mapToDouble(Counter::count).sum();
    }

    @Override
    public void close() {
        for (int i = resources.size() - 1; i >= 0; i--) {
            try {
                resources.get(i).close();
            } catch (Exception e) {
                LOGGER.warn("close failed resource={} error=\"{}\"", resources.get(i).getClass().getSimpleName(), e.toString());
            }
        }
        resources.clear();
    }
}
