package io.devhealth.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.NodeHeartbeat;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.avro.SourceState;
import io.devhealth.schema.avro.SourceStatus;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
import io.devhealth.testkit.kafka.TopicReader;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keep-alives kept in the node's state (PendingRefresh) survive a restart that restores every store
 * from its changelog: the device's stored deadline is long past on the node's clock, and only its
 * node's pending refresh says it is still fresh.
 */
@ExtendWith(KafkaClusterExtension.class)
class KeepAliveRestartIT {

    private static final String NODE = "node-r";
    private static final String DRIVER = "gpu.example.com";
    private static final Duration WAIT = Duration.ofSeconds(90);
    /** The device's own timeout: long, so that no wall-clock waiting in this test can expire it. */
    private static final long TIMEOUT_SECONDS = 120;

    private final Instant t0 = Instant.now().truncatedTo(ChronoUnit.MILLIS).minus(Duration.ofHours(1));
    private ProcessorRun run;
    private long sequence;

    @BeforeEach
    void createTopics(EmbeddedKafkaCluster cluster) {
        run = new ProcessorRun(cluster, "restart", 1);
    }

    @AfterEach
    void stop() {
        run.close();
    }

    private StreamProcessorApp startProcessor(Path stateDir) throws Exception {
        // The first instance leaves the group as it closes (StreamProcessorApp.membershipOnClose): the second gets the
        // partition at once. The short session timeout only bounds the wait should it not.
        return run.start(stateDir, Map.of("kafka." + ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000"));
    }

    @Test
    void shouldKeepTheLatestKeepAliveAcrossARestartFromTheChangelogs(@TempDir Path tmp) throws Exception {
        startProcessor(tmp.resolve("first"));
        send(report(ReportKind.CHANGE, t0));
        send(report(ReportKind.KEEPALIVE, t0.plusSeconds(100)));
        send(report(ReportKind.KEEPALIVE, t0.plusSeconds(200)));
        run.awaitCommitted(run.topics.nodeEvents(), WAIT);
        assertThat(transitions()).containsExactly("UNKNOWN->HEALTHY@" + t0);
        run.stop();

        // A new instance with an empty state directory: every store comes back from its changelog.
        StreamProcessorApp second = startProcessor(tmp.resolve("second"));
        // The node's clock passes the deadline the device was last written with (t0 + 120 s)...
        send(heartbeat(t0.plusSeconds(205)));
        run.awaitCommitted(run.topics.nodeEvents(), WAIT);
        assertThat(transitions()).as("no spurious Unknown after the restart").containsExactly("UNKNOWN->HEALTHY@" + t0);
        // What an operator watches meanwhile: records restored, and nothing left to restore once every task has
        // restored. The node task answering (above) does not say the rest have: the tasks of the other
        // sub-topologies (pod claims, fleet counts) are restored on their own and may still be at it.
        assertThat(second.meters().get(RestoreProgress.RESTORED).counter().count()).as("changelog records restored").isPositive();
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(second.meters().get(RestoreProgress.RESTORE_REMAINING).gauge().value()).isZero();
            assertThat(second.meters().get(RestoreProgress.RESTORE_PARTITIONS).gauge().value()).isZero();
        });
        assertThat(second.meters().get(RestoreProgress.RESTORE_TIME).timer().count()).as("store partitions restored").isPositive();

        // ...and the device goes Unknown exactly when its latest keep-alive times out.
        send(heartbeat(t0.plusSeconds(321)));
        run.awaitCommitted(run.topics.nodeEvents(), WAIT);
        assertThat(transitions()).containsExactly("UNKNOWN->HEALTHY@" + t0,
                "HEALTHY->UNKNOWN@" + t0.plusSeconds(200 + TIMEOUT_SECONDS));
    }

    private DeviceHealthReport report(ReportKind kind, Instant at) {
        return DeviceHealthReport.newBuilder().setNode(NODE).setSource(SourceKind.DRA).setSourceName(DRIVER)
                .setDevice(DeviceRef.newBuilder().setDriver(DRIVER).setPool(NODE).setDevice("gpu-0").build())
                .setHealth(HealthStatus.HEALTHY).setKind(kind).setTimeoutSeconds(TIMEOUT_SECONDS)
                .setObservedAt(at).setCollectorEpoch(1).setSequence(++sequence).build();
    }

    private NodeHeartbeat heartbeat(Instant at) {
        return NodeHeartbeat.newBuilder().setNode(NODE).setObservedAt(at)
                .setSources(List.of(SourceState.newBuilder().setSource(SourceKind.DRA).setSourceName(DRIVER)
                        .setState(SourceStatus.UP).setSince(t0).build()))
                .setCollectorEpoch(1).setSequence(++sequence).build();
    }

    private void send(Object payload) throws Exception {
        run.sendReport(NODE, payload);
    }

    /** Every committed transition so far, as {@code from->to@at}. */
    private List<String> transitions() {
        try (TopicReader<String, HealthTransition> reader = TopicReader.of(run.kafka, run.topics.healthTransitions())
                .deserializers(new StringDeserializer(), run.serdes.healthTransitions().deserializer()).open()) {
            return reader.readToEnd(WAIT).stream()
                    .map(r -> r.value().getFrom() + "->" + r.value().getTo() + "@" + r.value().getAt()).toList();
        }
    }
}
