package io.devhealth.processor;

import static org.awaitility.Awaitility.await;

import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.avro.NodeHeartbeat;
import io.devhealth.schema.avro.TerminatedPod;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.ThreadMetadata;

/**
 * The production processor ({@link StreamProcessorApp}) against the in-process broker, as the
 * integration tests run it: topics of its own, an in-memory schema registry, and a producer that writes
 * what collectors write. One per test class; the processor may be started again (a restart) with another
 * state directory, and more than one instance of it may run (each on its own state directory). The query
 * API's tests start the processor composed with its query API the same way ({@link #start(Path, Map, Function, Consumer)}).
 */
public final class ProcessorRun implements AutoCloseable {

    public final EmbeddedKafkaCluster kafka;
    public final Topics topics;
    public final ProcessorSerdes serdes;
    public final String applicationId;
    private final String registryUrl;
    private KafkaProducer<String, byte[]> producer;
    private final List<AutoCloseable> apps = new ArrayList<>();

    /** Creates the processor's topics with {@code partitions} partitions each, named after {@code name}. */
    public ProcessorRun(EmbeddedKafkaCluster kafka, String name, int partitions) {
        this.kafka = kafka;
        this.topics = new Topics(EmbeddedKafkaCluster.uniqueName(name) + ".");
        kafka.createTopics(partitions, topics.nodeEvents(), topics.healthTransitions(), topics.podVerdicts(), topics.fleetStats(), topics.deadLetters());
        kafka.createCompactedTopics(partitions, topics.podDeviceStatus());
        this.registryUrl = "mem://" + EmbeddedKafkaCluster.uniqueName("registry");
        this.serdes = ProcessorSerdes.over(SchemaRegistries.fromUrl(registryUrl));
        this.applicationId = EmbeddedKafkaCluster.uniqueName(name + "-app");
    }

    /** Starts the processor on {@code stateDir}; {@code settings} add to or override the test defaults. */
    public StreamProcessorApp start(Path stateDir, Map<String, String> settings) throws Exception {
        return start(stateDir, settings, new ProcessorClients());
    }

    /** Starts the processor on {@code stateDir} with its Kafka clients from {@code clients}. */
    public StreamProcessorApp start(Path stateDir, Map<String, String> settings, ProcessorClients clients) throws Exception {
        return start(stateDir, settings, config -> new StreamProcessorApp(new ProcessorConfig(config), clients, Optional.empty()),
                StreamProcessorApp::start);
    }

    /**
     * Starts an instance that {@code create} builds from the test defaults with {@code settings} on top, on
     * {@code stateDir}; {@code start} starts it. It is closed with the others ({@link #stop()}).
     */
    public <T extends AutoCloseable> T start(Path stateDir, Map<String, String> settings, Function<Map<String, String>, T> create,
                                             Consumer<T> start) throws Exception {
        Map<String, String> config = new HashMap<>(Map.of(
                ProcessorConfig.BOOTSTRAP_SERVERS, kafka.bootstrapServers(),
                ProcessorConfig.SCHEMA_REGISTRY_URL, registryUrl,
                ProcessorConfig.TOPIC_PREFIX, topics.prefix(),
                ProcessorConfig.APPLICATION_ID, applicationId,
                ProcessorConfig.STATE_DIR, Files.createDirectories(stateDir).toString(),
                "kafka." + ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"));
        config.putAll(settings);
        T app = create.apply(config);
        apps.add(app);
        start.accept(app);
        return app;
    }

    /** Stops every instance started (not the broker: its topics and committed offsets stay for the next start). */
    public void stop() {
        for (int i = apps.size() - 1; i >= 0; i--) {
            close(apps.remove(i));
        }
    }

    /** Stops one instance gracefully, as SIGTERM does. */
    public void stop(AutoCloseable app) {
        if (apps.remove(app)) {
            close(app);
        }
    }

    private static void close(AutoCloseable app) {
        try {
            app.close();
        } catch (Exception e) {
            throw new IllegalStateException("closing " + app + " failed", e);
        }
    }

    /** Whether the instance's Kafka Streams runs (no rebalance or restore under way). */
    public static boolean running(StreamProcessorApp app) {
        return running(app.streams());
    }

    /** Whether {@code streams} runs (no rebalance or restore under way). */
    public static boolean running(KafkaStreams streams) {
        return streams.state() == KafkaStreams.State.RUNNING;
    }

    /** The tasks the instance holds active now, over all its stream threads. */
    public static List<TaskMetadata> activeTasks(StreamProcessorApp app) {
        return activeTasks(app.streams());
    }

    /** The tasks {@code streams} holds active now, over all its stream threads. */
    public static List<TaskMetadata> activeTasks(KafkaStreams streams) {
        List<TaskMetadata> tasks = new ArrayList<>();
        for (ThreadMetadata thread : streams.metadataForLocalThreads()) {
            tasks.addAll(thread.activeTasks());
        }
        return tasks;
    }

    /**
     * Until the processor has committed (exactly once: with its state and output) every record on every
     * partition of {@code topic} so far: the group's committed position is each partition's end.
     */
    public void awaitCommitted(String topic, Duration atMost) {
        await(topic + " committed").atMost(atMost).until(() -> {
            Map<TopicPartition, OffsetSpec> ends = new HashMap<>();
            kafka.admin().describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions()
                    .forEach(p -> ends.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
            var latest = kafka.admin().listOffsets(ends).all().get();
            Map<TopicPartition, OffsetAndMetadata> committed = kafka.admin().listConsumerGroupOffsets(applicationId)
                    .partitionsToOffsetAndMetadata().get();
            return latest.entrySet().stream().allMatch(end -> end.getValue().offset() == 0
                    || committed.get(end.getKey()) != null && committed.get(end.getKey()).offset() >= end.getValue().offset());
        });
    }

    /** A device report or heartbeat, as a collector writes it: on node-events, stamped with its observedAt. */
    public void sendReport(String node, Object payload) throws Exception {
        Instant at = payload instanceof DeviceHealthReport r ? r.getObservedAt() : ((NodeHeartbeat) payload).getObservedAt();
        sendEvent(node, at, new NodeEvent(payload));
    }

    public void sendAllocations(NodeAllocations allocations) throws Exception {
        sendEvent(allocations.getNode(), allocations.getObservedAt(), new NodeEvent(allocations));
    }

    private void sendEvent(String node, Instant at, NodeEvent event) throws Exception {
        send(topics.nodeEvents(), node, at.toEpochMilli(), serdes.nodeEvents().serializer().serialize(topics.nodeEvents(), event));
    }

    /** A terminated pod's verdict, as the sink publishes it: on pod-verdicts, keyed by pod, stamped with its recordedAt. */
    public void sendVerdict(TerminatedPod verdict) throws Exception {
        send(topics.podVerdicts(), verdict.getPod().getNamespace() + "/" + verdict.getPod().getName(), verdict.getRecordedAt().toEpochMilli(),
                serdes.podVerdicts().serializer().serialize(topics.podVerdicts(), verdict));
    }

    /** Any bytes: bad input. The record's timestamp is the producer's. */
    public void sendRaw(String topic, String key, byte[] value) throws Exception {
        producer().send(new ProducerRecord<>(topic, key, value)).get();
    }

    private void send(String topic, String key, long timestamp, byte[] value) throws Exception {
        producer().send(new ProducerRecord<>(topic, null, timestamp, key, value)).get();
    }

    private KafkaProducer<String, byte[]> producer() {
        if (producer == null) {
            Properties props = new Properties();
            props.putAll(kafka.clientProperties());
            props.put(ProducerConfig.ACKS_CONFIG, "all");
            producer = new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer());
        }
        return producer;
    }

    @Override
    public void close() {
        stop();
        if (producer != null) {
            producer.close();
        }
    }
}
