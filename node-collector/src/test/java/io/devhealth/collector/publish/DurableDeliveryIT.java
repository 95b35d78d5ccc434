package io.devhealth.collector.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.collector.ops.CollectorMetrics;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.simulators.UniqueNames;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
import io.devhealth.testkit.kafka.OwnBroker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The spool → sender → idempotent producer path against a real broker that is stopped and
 * restarted mid-stream, and against a collector restart with a non-empty spool.
 */
@ExtendWith(KafkaClusterExtension.class)
class DurableDeliveryIT {

    private static final int DEVICES = 4;
    private static EmbeddedKafkaCluster kafka;

    @TempDir
    Path tmp;

    /** A broker of the class's own: the first test stops and restarts it. */
    @BeforeAll
    static void startKafka(@OwnBroker EmbeddedKafkaCluster own) {
        kafka = own;
    }

    private static DeviceHealthReport report(int device, int round) {
        return DeviceHealthReport.newBuilder()
                .setNode("node-a")
                .setSource(SourceKind.DRA)
                .setSourceName("gpu.example.com")
                .setDevice(DeviceRef.newBuilder().setDriver("gpu.example.com").setPool("node-a").setDevice("gpu-" + device).build())
                .setHealth(round % 2 == 0 ? HealthStatus.HEALTHY : HealthStatus.UNHEALTHY)
                .setKind(ReportKind.CHANGE)
                .setMessage(Integer.toString(round))
                .setObservedAt(Clock.systemUTC().instant())
                .build();
    }

    private static void publishRounds(KafkaReportPublisher publisher, int from, int to) {
        for (int round = from; round < to; round++) {
            for (int device = 0; device < DEVICES; device++) {
                publisher.publish(report(device, round));
            }
        }
    }

    private KafkaReportPublisher start(Topics topics, String registryUrl, Map<String, Object> client, Path spoolDir) {
        KafkaReportPublisher.Settings settings = KafkaReportPublisher.Settings.builder("node-a", topics, spoolDir)
                .clientProperties(client).spoolMaxBytes(64L * 1024 * 1024).spoolFsyncInterval(Duration.ofMillis(100))
                .maxInFlight(500).build();
        return KafkaReportPublisher.start(settings, SchemaRegistries.fromUrl(registryUrl),
                new CollectorMetrics(new SimpleMeterRegistry()), Clock.systemUTC());
    }

    /** Per device: the rounds in delivery order, the sequences in delivery order. */
    private static void assertNoLossNoReorder(List<DeliveredReports.Delivered> delivered, int rounds) {
        Map<String, List<Integer>> roundsByDevice = new HashMap<>();
        Map<String, List<Long>> sequencesByDevice = new HashMap<>();
        for (DeliveredReports.Delivered d : delivered) {
            DeviceHealthReport r = (DeviceHealthReport) d.payload();
            String device = r.getDevice().getDevice();
            assertThat(d.key()).isEqualTo("node-a");
            assertThat(d.sequenceHeader()).isEqualTo(r.getSequence());
            assertThat(d.epochHeader()).isEqualTo(r.getCollectorEpoch());
            roundsByDevice.computeIfAbsent(device, k -> new ArrayList<>()).add(Integer.parseInt(r.getMessage()));
            sequencesByDevice.computeIfAbsent(device, k -> new ArrayList<>()).add(r.getSequence());
        }
        assertThat(roundsByDevice).hasSize(DEVICES);
        List<Integer> expected = java.util.stream.IntStream.range(0, rounds).boxed().toList();
        roundsByDevice.forEach((device, seen) -> assertThat(seen).as("rounds of %s", device).isEqualTo(expected));
        sequencesByDevice.forEach((device, seen) -> assertThat(seen).as("sequences of %s", device).isSorted().doesNotHaveDuplicates());
    }

    @Test
    void shouldLoseAndReorderNothingWhileTheBrokerIsStoppedAndRestarted() {
        Topics topics = new Topics(UniqueNames.uniqueName("dd") + ".");
        kafka.createTopics(3, topics.nodeEvents());
        String registry = "mem://" + UniqueNames.uniqueName("reg");
        try (KafkaReportPublisher publisher = start(topics, registry, kafka.clientProperties(), tmp.resolve("spool"));
             DeliveredReports reader = new DeliveredReports(kafka.clientProperties(), registry, topics)) {
            publishRounds(publisher, 0, 50);
            reader.readUntil(delivered -> delivered == 50 * DEVICES, Duration.ofSeconds(60));

            kafka.stopBroker();
            publishRounds(publisher, 50, 150);
            // Nothing reaches Kafka: the records wait in the spool (the producer holds at most 500 of them).
            assertThat(publisher.spool().records()).isEqualTo(100L * DEVICES);

            kafka.restartBroker();
            publishRounds(publisher, 150, 200);

            reader.readUntil(delivered -> delivered >= 200 * DEVICES, Duration.ofSeconds(90));
            await("spool drained").atMost(Duration.ofSeconds(10)).until(() -> publisher.spool().records() == 0);
            List<DeliveredReports.Delivered> delivered = reader.poll();
            assertThat(delivered).hasSize(200 * DEVICES);
            assertNoLossNoReorder(delivered, 200);
        } finally {
            if (!kafka.isRunning()) {
                kafka.restartBroker();
            }
        }
    }

    @Test
    void shouldReplayTheSpoolAfterARestartWithTheSameEpochAndContinuingSequences() {
        Topics topics = new Topics(UniqueNames.uniqueName("dr") + ".");
        kafka.createTopics(1, topics.nodeEvents());
        String registry = "mem://" + UniqueNames.uniqueName("reg");
        Path spoolDir = tmp.resolve("spool");
        Map<String, Object> unreachable = new HashMap<>(Map.of("bootstrap.servers", "127.0.0.1:1"));
        long epoch;
        try (KafkaReportPublisher publisher = start(topics, registry, unreachable, spoolDir)) {
            publishRounds(publisher, 0, 30);
            epoch = publisher.spool().epoch();
            assertThat(publisher.spool().records()).isEqualTo(30L * DEVICES);
        }
        try (KafkaReportPublisher publisher = start(topics, registry, kafka.clientProperties(), spoolDir);
             DeliveredReports reader = new DeliveredReports(kafka.clientProperties(), registry, topics)) {
            publishRounds(publisher, 30, 40);
            reader.readUntil(delivered -> delivered >= 40 * DEVICES, Duration.ofSeconds(60));
            List<DeliveredReports.Delivered> delivered = reader.poll();
            assertThat(delivered).hasSize(40 * DEVICES);
            assertThat(delivered).allSatisfy(d -> assertThat(d.epochHeader()).isEqualTo(epoch));
            assertThat(delivered).extracting(DeliveredReports.Delivered::sequenceHeader)
                    .containsExactlyElementsOf(java.util.stream.LongStream.rangeClosed(1, 40L * DEVICES).boxed().toList());
            assertNoLossNoReorder(delivered, 40);
        }
    }
}
