package io.devhealth.cli.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.collector.ops.CollectorMetrics;
import io.devhealth.collector.publish.KafkaReportPublisher;
import io.devhealth.processor.DeadLetterHandler;
import io.devhealth.processor.DeviceHealthTopology;
import io.devhealth.processor.ProcessorConfig;
import io.devhealth.processor.ProcessorSerdes;
import io.devhealth.processor.StreamProcessorApp;
import io.devhealth.runtime.security.NodeKeyCredential;
import io.devhealth.runtime.security.RecordSigner;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.ClaimAllocation;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.ContainerAllocation;
import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.schema.serde.SchemaRegistryClient;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
import io.devhealth.testkit.kafka.TopicReader;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 9, end to end over a real broker: with {@code principals.enforce} on, a collector holding its
 * node key gets its reports to pod status, while a record signed with node A's key but keyed as node B
 * is dead-lettered and counted.
 *
 * <p>The processor is assembled here as {@link StreamProcessorApp} assembles it plus the verifying
 * serdes ({@link ProcessorSerdes#authenticated}); the collector is the production publisher with its
 * signer. Wiring both into the services' {@code create}/constructor is a two-line change the lead
 * applies (see the branch's report).
 */
@ExtendWith(KafkaClusterExtension.class)
class SignedPipelineIT {

    private static final String SECRET = "it-cluster-secret-" + UUID.randomUUID();
    private static final String DRIVER = "gpu.example.com";
    private static EmbeddedKafkaCluster kafka;
    private static Path dir;

    /** The shared broker: this test has topics of its own and leaves the broker as it found it. */
    @BeforeAll
    static void setUp(EmbeddedKafkaCluster shared) throws Exception {
        kafka = shared;
        dir = Files.createTempDirectory("dh-signed");
    }

    @Test
    void shouldApplySignedReportsAndDeadLetterRecordsSignedForAnotherNode() throws Exception {
        Topics topics = new Topics("devhealth-signed-" + UUID.randomUUID().toString().substring(0, 8) + ".");
        kafka.createTopics(1, topics.nodeEvents(), topics.healthTransitions(), topics.podVerdicts(), topics.fleetStats(), topics.deadLetters());
        kafka.createCompactedTopics(1, topics.podDeviceStatus());
        String registryUrl = "mem://signed-" + UUID.randomUUID();
        SchemaRegistryClient registry = SchemaRegistries.fromUrl(registryUrl);

        Map<String, Object> settings = new HashMap<>();
        settings.put(ProcessorConfig.BOOTSTRAP_SERVERS, kafka.bootstrapServers());
        settings.put(ProcessorConfig.SCHEMA_REGISTRY_URL, registryUrl);
        settings.put(ProcessorConfig.TOPIC_PREFIX, topics.prefix());
        settings.put(ProcessorConfig.APPLICATION_ID, "signed-" + UUID.randomUUID().toString().substring(0, 8));
        settings.put(ProcessorConfig.STATE_DIR, dir.resolve("state").toString());
        settings.put(ProcessorConfig.PRINCIPALS_ENFORCE, "true");
        settings.put(ProcessorConfig.PRINCIPALS_SECRET, SECRET);
        ProcessorConfig config = new ProcessorConfig(settings);
        SimpleMeterRegistry meters = new SimpleMeterRegistry();

        ProcessorSerdes serdes = ProcessorSerdes.over(registry).authenticated(topics, config.recordVerifier(), meters);
        Properties props = StreamProcessorApp.streamsProperties(config);
        DeadLetterHandler.configure(props, topics.deadLetters(), serdes.deadLetters().serializer(), meters,
                DeviceHealthTopology.inputTopics(topics));
        byte[] master = SECRET.getBytes(StandardCharsets.UTF_8);

        try (KafkaStreams streams = new KafkaStreams(DeviceHealthTopology.build(topics, serdes, config.topologyOptions(meters)), props);
             KafkaReportPublisher nodeA = KafkaReportPublisher.start(
                     KafkaReportPublisher.Settings.builder("node-a", topics, dir.resolve("spool-a"))
                             .clientProperties(kafka.clientProperties()).spoolMaxBytes(1 << 20)
                             .spoolFsyncInterval(Duration.ofMillis(100)).maxInFlight(100)
                             .signer(Optional.of(new RecordSigner(NodeKeyCredential.issue(master, "node-a")))).build(),
                     registry, new CollectorMetrics(new SimpleMeterRegistry()), Clock.systemUTC())) {
            streams.start();
            Instant now = Instant.now();
            nodeA.publish(allocations("node-a", "train-a", now));
            nodeA.publish(report("node-a", now.plusMillis(1)));

            // node-a's compromised collector writes node-b's facts, signed with its own key (the only one it has).
            forge(topics, registry, master, now.plusMillis(2));

            List<PodDeviceStatus> statuses;
            List<DeadLetter> letters;
            try (TopicReader<byte[], PodDeviceStatus> statusReader = TopicReader.of(kafka, topics.podDeviceStatus()).readUncommitted()
                         .deserializers(new ByteArrayDeserializer(), serdes.podDeviceStatus().deserializer()).open();
                 TopicReader<byte[], DeadLetter> letterReader = TopicReader.of(kafka, topics.deadLetters()).readUncommitted()
                         .deserializers(new ByteArrayDeserializer(), serdes.deadLetters().deserializer()).open()) {
                statusReader.readUntil(read -> read.stream().map(r -> r.value().toString())
                        .anyMatch(s -> s.contains("train-a") && s.contains("UNHEALTHY")), Duration.ofSeconds(60));
                letters = letterReader.readAtLeast(2, Duration.ofSeconds(60)).stream().map(ConsumerRecord::value).toList();
                // Every status written by now, so that a forged one would be among them.
                statuses = statusReader.readToEnd(Duration.ofSeconds(60)).stream().map(ConsumerRecord::value).toList();
            }
            assertThat(statuses).noneMatch(s -> s.toString().contains("train-b"));
            assertThat(letters).extracting(DeadLetter::getReason).anySatisfy(r -> assertThat(r).contains("devhealth.node='node-a'"))
                    .anySatisfy(r -> assertThat(r).contains("unauthenticated record").contains("invalid signature"));
            assertThat(rejected(meters, "header") + rejected(meters, "signature")).isGreaterThanOrEqualTo(3.0);
            assertThat(rejected(meters, "header")).isGreaterThanOrEqualTo(1.0);
        }
    }

    private static double rejected(SimpleMeterRegistry meters, String check) {
        return meters.find("devhealth.processor.node.identity.rejected").tag("check", check).counters().stream()
                .mapToDouble(Counter::count).sum();
    }

    /** Allocations and an Unhealthy report for node-b: keyed node-b, signed once as node-a, once claiming node-b with A's key. */
    private static void forge(Topics topics, SchemaRegistryClient registry, byte[] master, Instant at) throws Exception {
        NodeKeyCredential mine = NodeKeyCredential.issue(master, "node-a");
        RecordSigner honestHeader = new RecordSigner(mine);
        RecordSigner claimsB = new RecordSigner(new NodeKeyCredential(mine.keyId(), "node-b", mine.key()));
        ProcessorSerdes serdes = ProcessorSerdes.over(registry);
        NodeAllocations allocations = allocations("node-b", "train-b", at);
        allocations.setCollectorEpoch(1L);
        allocations.setSequence(1L);
        byte[] allocationBytes = serdes.nodeEvents().serializer().serialize(topics.nodeEvents(), new NodeEvent(allocations));
        DeviceHealthReport report = report("node-b", at);
        report.setCollectorEpoch(1L);
        report.setSequence(2L);
        byte[] reportBytes = serdes.nodeEvents().serializer().serialize(topics.nodeEvents(), new NodeEvent(report));
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(kafka.clientProperties(), new StringSerializer(),
                new ByteArraySerializer())) {
            for (RecordSigner signer : List.of(honestHeader, claimsB)) {
                send(producer, signer, topics.nodeEvents(), allocationBytes);
                send(producer, signer, topics.nodeEvents(), reportBytes);
            }
            producer.flush();
        }
    }

    private static void send(KafkaProducer<String, byte[]> producer, RecordSigner signer, String topic, byte[] value) throws Exception {
        RecordHeaders headers = new RecordHeaders();
        signer.sign(topic, value, headers);
        producer.send(new ProducerRecord<>(topic, null, "node-b", value, headers)).get();
    }

    private static NodeAllocations allocations(String node, String pod, Instant at) {
        return NodeAllocations.newBuilder().setNode(node).setObservedAt(at)
                .setPods(List.of(new PodAllocation("ml", pod, List.of(ContainerAllocation.newBuilder().setName("main")
                        .setClaims(List.of(new ClaimAllocation(pod + "-gpu", "ml", List.of(ClaimDevice.newBuilder()
                                .setDriver(DRIVER).setPool(node).setDevice("gpu-0").build())))).build()))))
                .build();
    }

    private static DeviceHealthReport report(String node, Instant at) {
        return DeviceHealthReport.newBuilder().setNode(node).setSource(SourceKind.DRA).setSourceName(DRIVER)
                .setDevice(DeviceRef.newBuilder().setDriver(DRIVER).setPool(node).setDevice("gpu-0").build())
                .setHealth(HealthStatus.UNHEALTHY).setKind(ReportKind.CHANGE).setMessage("XID 79").setObservedAt(at).build();
    }
}
