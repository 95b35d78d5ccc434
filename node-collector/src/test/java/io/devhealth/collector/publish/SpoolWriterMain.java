package io.devhealth.collector.publish;

import io.devhealth.collector.ops.CollectorMetrics;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.serde.SchemaRegistries;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;

/**
 * A collector's publishing path in its own JVM, for {@link SpoolKillIT}: Kafka unreachable, so every
 * record stays in the spool; prints {@code accepted <sequence>} after each publish returned, until it
 * is killed. Default fsync policy (interval, not per record): kill -9 must lose nothing regardless.
 */
public final class SpoolWriterMain {

    private SpoolWriterMain() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        KafkaReportPublisher.Settings settings = KafkaReportPublisher.Settings.builder("node-k", Topics.withDefaultPrefix(), dir)
                .clientProperties(Map.of("bootstrap.servers", "127.0.0.1:1"))
                .spoolMaxBytes(64L * 1024 * 1024).spoolFsyncInterval(Duration.ofSeconds(1)).maxInFlight(100).build();
        KafkaReportPublisher publisher = KafkaReportPublisher.start(settings, SchemaRegistries.fromUrl("mem://kill"),
                new CollectorMetrics(new SimpleMeterRegistry()), Clock.systemUTC());
        for (long i = 0; ; i++) {
            DeviceHealthReport report = DeviceHealthReport.newBuilder().setNode("node-k").setSourceName("gpu.example.com")
                    .setDevice(DeviceRef.newBuilder().setDriver("gpu.example.com").setPool("p").setDevice("gpu-" + (i % 8)).build())
                    .setHealth(HealthStatus.UNHEALTHY).setKind(ReportKind.CHANGE).setMessage("report " + i)
                    .setObservedAt(Clock.systemUTC().instant()).build();
            publisher.publish(report);
            System.out.println("accepted " + report.getSequence());
            System.out.flush();
            if (i % 50 == 0) {
                Thread.sleep(1);
            }
        }
    }
}
