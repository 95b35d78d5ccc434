package io.devhealth.collector.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.devhealth.collector.ops.CollectorMetrics;
import io.devhealth.collector.spool.DiskSpool;
import io.devhealth.runtime.security.NodeKeyCredential;
import io.devhealth.runtime.security.RecordSignature;
import io.devhealth.runtime.security.RecordSigner;
import io.devhealth.runtime.security.RecordVerifier;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeDevices;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.avro.NodeHeartbeat;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.simulators.UniqueNames;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KafkaSpoolSenderTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path tmp;

    private final Topics topics = new Topics("t.");
    private final List<MockProducer<String, byte[]>> producers = new CopyOnWriteArrayList<>();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final String registryUrl = "mem://" + UniqueNames.uniqueName("r");
    private DiskSpool spool;
    private SpoolingPublisher publisher;
    private KafkaSpoolSender sender;

    private static final byte[] MASTER = "a-cluster-secret-of-at-least-32-bytes!!".getBytes(StandardCharsets.UTF_8);
    private SpoolCodec codec;
    private CollectorMetrics metrics;

    @BeforeEach
    void setUp() {
        spool = DiskSpool.open(new DiskSpool.Settings(tmp.resolve("spool"), 1 << 20, Duration.ofMillis(100)), Clock.systemUTC());
        codec = new SpoolCodec(spool);
        metrics = new CollectorMetrics(registry);
        publisher = new SpoolingPublisher(spool, codec, metrics);
        sender = sender(Optional.empty());
    }

    private KafkaSpoolSender sender(Optional<RecordSigner> signer) {
        KafkaSpoolSender.Settings settings = KafkaSpoolSender.Settings.builder("node-a", topics)
                .maxInFlight(100).closeTimeout(Duration.ofMillis(100)).signer(signer).build();
        return new KafkaSpoolSender(settings, spool, codec, SchemaRegistries.fromUrl(registryUrl),
                () -> {
                    MockProducer<String, byte[]> producer = new MockProducer<>(false, null, new StringSerializer(), new ByteArraySerializer());
                    producers.add(producer);
                    return producer;
                }, metrics, Clock.systemUTC());
    }

    private void useSender(Optional<RecordSigner> signer) {
        sender.close();
        sender = sender(signer);
    }

    @Test
    void shouldStampEveryRecordWithItsNodeEvenWithoutAKey() {
        publisher.publish(report(0));
        sender.start();
        MockProducer<String, byte[]> producer = producer(0);
        await().atMost(WAIT).until(() -> producer.history().size() == 1);

        ProducerRecord<String, byte[]> record = producer.history().get(0);
        assertThat(record.headers().lastHeader(RecordSignature.NODE_HEADER).value()).asString(StandardCharsets.UTF_8).isEqualTo("node-a");
        assertThat(record.headers().lastHeader(RecordSignature.SIGNATURE_HEADER)).isNull();
    }

    @Test
    void shouldSendEveryKindAsANodeEventOnTheNodeEventsTopicInSpoolOrder() {
        long before = System.currentTimeMillis();
        publisher.publish(report(0));
        publisher.publish(heartbeat());
        publisher.publish(NodeAllocations.newBuilder().setNode("node-a").setObservedAt(Instant.now()).build());
        publisher.publish(NodeDevices.newBuilder().setNode("node-a").setObservedAt(Instant.now()).build());
        publisher.publish(report(1));
        sender.start();
        MockProducer<String, byte[]> producer = producer(0);
        await().atMost(WAIT).until(() -> producer.history().size() == 5);

        List<ProducerRecord<String, byte[]>> sent = producer.history();
        assertThat(sent).extracting(ProducerRecord::topic).containsOnly(topics.nodeEvents());
        assertThat(sent).extracting(ProducerRecord::key).containsOnly("node-a");
        long after = System.currentTimeMillis();
        assertThat(sent).extracting(ProducerRecord::timestamp).allSatisfy(t -> assertThat(t).isBetween(before, after));
        assertThat(sequences(sent)).containsExactly("1", "2", "3", "4", "5");
        List<Object> payloads = sent.stream().map(r -> event(r).getPayload()).toList();
        assertThat(payloads).hasExactlyElementsOfTypes(DeviceHealthReport.class, NodeHeartbeat.class, NodeAllocations.class,
                NodeDevices.class, DeviceHealthReport.class);
        assertThat(((DeviceHealthReport) payloads.get(0)).getMessage()).isEqualTo("m0");
        assertThat(((DeviceHealthReport) payloads.get(4)).getMessage()).isEqualTo("m1");
        assertThat(((NodeHeartbeat) payloads.get(1)).getSequence()).isEqualTo(2L);
        assertThat(((NodeAllocations) payloads.get(2)).getSequence()).isEqualTo(3L);
        assertThat(((NodeDevices) payloads.get(3)).getSequence()).isEqualTo(4L);
    }

    /** A signing sender, after it sent a report, an allocation snapshot and an inventory. */
    private MockProducer<String, byte[]> sendEveryKindSigned() {
        useSender(Optional.of(new RecordSigner(NodeKeyCredential.issue(MASTER, "node-a"))));
        publisher.publish(report(0));
        publisher.publish(NodeAllocations.newBuilder().setNode("node-a").setObservedAt(Instant.now()).build());
        publisher.publish(NodeDevices.newBuilder().setNode("node-a").setObservedAt(Instant.now()).build());
        sender.start();
        MockProducer<String, byte[]> producer = producer(0);
        await().atMost(WAIT).until(() -> producer.history().size() == 3);
        return producer;
    }

    @Test
    void shouldSignEveryNodeEventOverTheNodeEventsTopic() {
        MockProducer<String, byte[]> producer = sendEveryKindSigned();

        RecordVerifier verifier = new RecordVerifier(List.of(MASTER));
        for (ProducerRecord<String, byte[]> record : producer.history()) {
            assertThat(record.topic()).isEqualTo(topics.nodeEvents());
            RecordVerifier.Verification verification = verifier.verify(topics.nodeEvents(), record.headers(), record.value());
            assertThat(verification.valid()).as(verification.failure()).isTrue();
            assertThat(verification.node()).isEqualTo("node-a");
            assertThat(record.headers().headers(RecordSignature.NODE_HEADER)).as("one node header").hasSize(1);
        }
        // The topic is part of what is signed: the same bytes do not verify as a record of another topic.
        ProducerRecord<String, byte[]> first = producer.history().get(0);
        assertThat(verifier.verify(topics.healthTransitions(), first.headers(), first.value()).valid()).isFalse();
    }

    @Test
    void shouldRefuseAnotherNodesKey() {
        Optional<RecordSigner> other = Optional.of(new RecordSigner(NodeKeyCredential.issue(MASTER, "node-b")));

        assertThatThrownBy(() -> sender(other)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("node-b");
    }

    @AfterEach
    void tearDown() {
        sender.close();
        spool.close();
    }

    private static DeviceHealthReport report(int n) {
        return DeviceHealthReport.newBuilder().setNode("node-a").setSourceName("d")
                .setDevice(DeviceRef.newBuilder().setDriver("d").setPool("p").setDevice("gpu-0").build())
                .setHealth(HealthStatus.HEALTHY).setKind(ReportKind.CHANGE).setMessage("m" + n).setObservedAt(Instant.now()).build();
    }

    private static NodeHeartbeat heartbeat() {
        return NodeHeartbeat.newBuilder().setNode("node-a").setObservedAt(Instant.now()).build();
    }

    private MockProducer<String, byte[]> producer(int index) {
        await().atMost(WAIT).until(() -> producers.size() > index);
        return producers.get(index);
    }

    private static List<String> sequences(List<ProducerRecord<String, byte[]>> records) {
        return records.stream()
                .map(r -> new String(r.headers().lastHeader(KafkaSpoolSender.SEQUENCE_HEADER).value(), StandardCharsets.US_ASCII))
                .toList();
    }

    @Test
    void shouldRemoveRecordsOnlyOnceKafkaAcknowledgedThem() {
        for (int i = 0; i < 3; i++) {
            publisher.publish(report(i));
        }
        sender.start();
        MockProducer<String, byte[]> producer = producer(0);
        await().atMost(WAIT).until(() -> producer.history().size() == 3);

        assertThat(spool.records()).isEqualTo(3);
        ProducerRecord<String, byte[]> first = producer.history().get(0);
        assertThat(first.key()).isEqualTo("node-a");
        assertThat(first.topic()).isEqualTo(topics.nodeEvents());
        assertThat(new String(first.headers().lastHeader(KafkaSpoolSender.EPOCH_HEADER).value(), StandardCharsets.US_ASCII))
                .isEqualTo(Long.toString(spool.epoch()));

        producer.completeNext();
        producer.completeNext();
        await().atMost(WAIT).until(() -> spool.records() == 1);
        producer.completeNext();
        await().atMost(WAIT).until(() -> spool.records() == 0);
        assertThat(registry.get("devhealth.collector.kafka.send").timer().count()).isEqualTo(3);
    }

    @Test
    void shouldCarryTheSpoolsEpochAndSequenceInsideTheInventory() {
        publisher.publish(report(0));
        publisher.publish(NodeDevices.newBuilder().setNode("node-a").setObservedAt(Instant.now()).build());
        sender.start();
        MockProducer<String, byte[]> producer = producer(0);
        await().atMost(WAIT).until(() -> producer.history().size() == 2);

        ProducerRecord<String, byte[]> record = producer.history().get(1);
        NodeDevices sent = inventory(record);
        assertThat(sent.getCollectorEpoch()).isEqualTo(spool.epoch()).isPositive();
        assertThat(sent.getSequence()).isEqualTo(2L);
        assertThat(sequences(List.of(record))).containsExactly(Long.toString(sent.getSequence()));
        assertThat(new String(record.headers().lastHeader(KafkaSpoolSender.EPOCH_HEADER).value(), StandardCharsets.US_ASCII))
                .isEqualTo(Long.toString(sent.getCollectorEpoch()));
    }

    /** The inventory a record carries. */
    private NodeDevices inventory(ProducerRecord<String, byte[]> record) {
        assertThat(record.topic()).isEqualTo(topics.nodeEvents());
        return (NodeDevices) event(record).getPayload();
    }

    private NodeEvent event(ProducerRecord<String, byte[]> record) {
        return AvroSerde.of(NodeEvent.class, SchemaRegistries.fromUrl(registryUrl)).deserializer()
                .deserialize(record.topic(), record.headers(), record.value());
    }

    @Test
    void shouldRemoveARecordKafkaCanNeverTakeAndCountIt() {
        publisher.publish(report(0));
        publisher.publish(report(1));
        sender.start();
        MockProducer<String, byte[]> producer = producer(0);
        await().atMost(WAIT).until(() -> producer.history().size() == 2);

        producer.errorNext(new RecordTooLargeException("too large"));
        producer.completeNext();

        await().atMost(WAIT).until(() -> spool.records() == 0);
        assertThat(registry.get("devhealth.collector.kafka.poison").counter().count()).isEqualTo(1);
        assertThat(producers).hasSize(1);
    }

    @Test
    void shouldResendEverythingUnacknowledgedInOrderWithANewProducerAfterAFatalError() {
        for (int i = 0; i < 4; i++) {
            publisher.publish(report(i));
        }
        sender.start();
        MockProducer<String, byte[]> first = producer(0);
        await().atMost(WAIT).until(() -> first.history().size() == 4);
        first.completeNext(); // sequence 1 is in Kafka

        first.errorNext(new TopicAuthorizationException("not allowed"));

        MockProducer<String, byte[]> second = producer(1);
        await().atMost(WAIT).until(() -> second.history().size() == 3);
        assertThat(sequences(second.history())).containsExactly("2", "3", "4");
        while (second.completeNext()) {
            // acknowledge all
        }
        await().atMost(WAIT).until(() -> spool.records() == 0);
    }

    @Test
    void shouldRetryFromTheRecordThatCouldNotBeHandedOverWithoutLettingLaterOnesOvertakeIt() {
        publisher.publish(report(0));
        sender.start();
        MockProducer<String, byte[]> producer = producer(0);
        await().atMost(WAIT).until(() -> producer.history().size() == 1);
        producer.sendException = new TimeoutException("no metadata within max.block.ms");
        publisher.publish(report(1));
        publisher.publish(report(2));
        await().atMost(WAIT).until(() -> registry.get("devhealth.collector.kafka.send.failures").counter().count() >= 1);

        producer.sendException = null;

        await().atMost(WAIT).until(() -> producer.history().size() == 3);
        assertThat(sequences(producer.history())).containsExactly("1", "2", "3");
        assertThat(spool.records()).isEqualTo(3);
    }
}
