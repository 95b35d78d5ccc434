package io.devhealth.collector.publish;

import io.devhealth.collector.ops.CollectorMetrics;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.simulators.UniqueNames;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
import io.devhealth.testkit.kafka.OwnBroker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Not a test: prints how fast the spool accepts records and how fast a spool left by a Kafka
 * outage replays into a real (in-process) broker. Runs only with {@code -Ddevhealth.bench=true};
 * the command is in docs/COLLECTOR.md. Asserts nothing about time.
 */
@EnabledIfSystemProperty(named = "devhealth.bench", matches = "true")
@ExtendWith(KafkaClusterExtension.class)
class SpoolReplayBenchmarkIT {

    private static final int RECORDS = Integer.getInteger("devhealth.bench.records", 200_000);

    @TempDir
    Path tmp;

    @Test
    /** A broker of its own, fresh and idle, so that the replay rate is the spool's and not other tests' load. */
    void printAcceptAndReplayRates(@OwnBroker EmbeddedKafkaCluster kafka) {
        Path spoolDir = tmp.resolve("spool");
        Topics topics = new Topics(UniqueNames.uniqueName("bench") + ".");
        String registry = "mem://" + UniqueNames.uniqueName("bench");
        KafkaReportPublisher.Settings.Builder settings = KafkaReportPublisher.Settings.builder("node-b", topics, spoolDir)
                .spoolMaxBytes(1L << 30).spoolFsyncInterval(Duration.ofSeconds(1)).maxInFlight(2_000);

        long acceptStart = System.nanoTime();
        try (KafkaReportPublisher down = KafkaReportPublisher.start(
                settings.clientProperties(Map.of("bootstrap.servers", "127.0.0.1:1")).build(),
                SchemaRegistries.fromUrl(registry), new CollectorMetrics(new SimpleMeterRegistry()), Clock.systemUTC())) {
            for (int i = 0; i < RECORDS; i++) {
                down.publish(DeviceHealthReport.newBuilder().setNode("node-b").setSourceName("gpu.example.com")
                        .setDevice(DeviceRef.newBuilder().setDriver("gpu.example.com").setPool("node-b").setDevice("gpu-" + (i % 8)).build())
                        .setHealth(HealthStatus.HEALTHY).setKind(ReportKind.KEEPALIVE).setObservedAt(Instant.now()).build());
            }
            double acceptSeconds = (System.nanoTime() - acceptStart) / 1e9;
            System.out.printf("BENCH spool accept: %d records in %.2f s = %.0f records/s, %d bytes spooled (%.0f bytes/record)%n",
                    RECORDS, acceptSeconds, RECORDS / acceptSeconds, down.spool().bytes(), (double) down.spool().bytes() / RECORDS);
        }
        kafka.createTopics(1, topics.nodeEvents());
        long replayStart = System.nanoTime();
        try (KafkaReportPublisher up = KafkaReportPublisher.start(settings.clientProperties(kafka.clientProperties()).build(),
                SchemaRegistries.fromUrl(registry), new CollectorMetrics(new SimpleMeterRegistry()), Clock.systemUTC())) {
            while (up.spool().records() > 0) {
                Thread.sleep(50);
            }
            double replaySeconds = (System.nanoTime() - replayStart) / 1e9;
            System.out.printf("BENCH spool replay after outage: %d records in %.2f s = %.0f records/s (acks=all, idempotent, lz4)%n",
                    RECORDS, replaySeconds, RECORDS / replaySeconds);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
