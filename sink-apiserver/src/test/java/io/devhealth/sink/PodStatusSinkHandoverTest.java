package io.devhealth.sink;

import static io.devhealth.sink.PodStatusFixtures.device;
import static io.devhealth.sink.PodStatusFixtures.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.simulators.kube.PodFixtures;
import io.devhealth.sink.condition.PodStatusWriter;
import io.devhealth.testkit.kube.ShownVersions;
import io.devhealth.testkit.time.MutableClock;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A partition that comes to this sink from another owner: the records after its committed offset may have been
 * written by that owner already (it was killed before it committed them, or its partitions were revoked while its
 * patches were on the way), each pod at the latest of its records the owner had read. Writing the first records of
 * such a backlog as they come, one poll's worth at a time, would take a pod back to an older status than the one it
 * shows, until the rest of the backlog is written.
 */
@EnableKubernetesMockClient(crud = true)
class PodStatusSinkHandoverTest {

    private static final String TOPIC = "devhealth.pod-device-status";
    private static final TopicPartition PARTITION = new TopicPartition(TOPIC, 0);
    /** What the earlier owner committed: everything before the three statuses of the test. */
    private static final long COMMITTED = 5;

    KubernetesClient client;

    private final MutableClock clock = MutableClock.at("2026-11-29T10:00:00Z");
    private final MockConsumer<String, byte[]> consumer = new MockConsumer<>("earliest");
    private PodStatusSink sink;
    private Thread thread;

    @BeforeEach
    void createPod() {
        PodFixtures.createRunning(client, PodFixtures.podWithClaim("ml", "train-0", "node-a", "main", "gpu", "train-0-gpu", "gpu"));
    }

    @AfterEach
    void stopSink() throws InterruptedException {
        if (sink != null) {
            sink.close();
            thread.join(10_000);
        }
    }

    @Test
    void shouldWriteNoStatusOlderThanTheLatestOfTheBacklogAnEarlierOwnerMayHaveWrittenWhenAPollReturnsPartOfIt() {
        try (ShownVersions shown = ShownVersions.watch(client, "ml", PodStatusWriter.CONDITION_TYPE)) {
            // The earlier owner read versions 1 to 3 of the pod, wrote the latest and died before it committed them.
            PodStatusWriter.builder(client, clock).build().write(gpu(3));
            await("the earlier owner's write seen").atMost(Duration.ofSeconds(10)).until(() -> shown.changes() == 1);
            consumer.updateBeginningOffsets(Map.of(PARTITION, 0L));
            consumer.updateEndOffsets(Map.of(PARTITION, COMMITTED + 3));
            // Each poll returns one record, as a poll of a backlog larger than max.poll.records returns part of it.
            consumer.setMaxPollRecords(1);
            consumer.schedulePollTask(() -> {
                consumer.commitSync(Map.of(PARTITION, new OffsetAndMetadata(COMMITTED)));
                consumer.rebalance(List.of(PARTITION));
                for (int version = 1; version <= 3; version++) {
                    consumer.addRecord(new ConsumerRecord<>(TOPIC, 0, COMMITTED + version - 1, "ml/train-0", encode(gpu(version))));
                }
            });
            start();

            await("the backlog committed").atMost(Duration.ofSeconds(10)).until(() -> committed() == COMMITTED + 3);
            assertThat(shown.byPod()).as("versions the pod showed").containsExactly(Map.entry("train-0", List.of(3L)));
        }
    }

    private void start() {
        SinkConfig config = new SinkConfig(Map.of(SinkConfig.BOOTSTRAP_SERVERS, "unused:9092", SinkConfig.SCHEMA_REGISTRY_URL, "mem://unused"));
        SinkMetrics metrics = new SinkMetrics(new SimpleMeterRegistry());
        MockProducer<String, DeadLetter> deadLetters = new MockProducer<>(true, null, new StringSerializer(), (t, v) -> new byte[0]);
        sink = new PodStatusSink(consumer, TOPIC, PodStatusSinkHandoverTest::decode, PodStatusWriter.builder(client, clock).build(),
                new DeadLetterPublisher(deadLetters, "devhealth.dlq", clock), new PodStatusMemory(config.trackedPodsMax()),
                new TerminationSchedule(config.trackedPodsMax()), metrics, clock, config);
        thread = new Thread(sink, "sink-under-test");
        thread.start();
    }

    private long committed() {
        OffsetAndMetadata offset = consumer.committed(Set.of(PARTITION)).get(PARTITION);
        return offset == null ? -1 : offset.offset();
    }

    private static PodDeviceStatus gpu(long version) {
        return status(version, "ml", "train-0", "main", "train-0-gpu", HealthStatus.UNHEALTHY,
                device("gpu-0", HealthStatus.UNHEALTHY, "XID 79 #" + version));
    }

    private static byte[] encode(PodDeviceStatus status) {
        try {
            ByteBuffer buffer = PodDeviceStatus.getEncoder().encode(status);
            byte[] bytes = new byte[buffer.remaining()];
            buffer.get(bytes);
            return bytes;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static PodDeviceStatus decode(byte[] bytes) {
        try {
            return PodDeviceStatus.getDecoder().decode(bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
