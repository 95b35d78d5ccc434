package io.devhealth.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.processor.TaskId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A graceful close (SIGTERM, as a rolling restart of the StatefulSet sends it) of a processor that is a
 * dynamic member of its group, as the shipped StatefulSet runs it: the instance that stays takes over
 * the closed one's tasks at once, not after the closed member's session has timed out (30 s here,
 * Kafka's default 45 s), during which those partitions' nodes would go unprocessed and unanswered.
 */
@ExtendWith(KafkaClusterExtension.class)
class GracefulHandOverIT {

    private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration WAIT = Duration.ofSeconds(90);

    private ProcessorRun run;

    @BeforeEach
    void createTopics(EmbeddedKafkaCluster cluster) {
        run = new ProcessorRun(cluster, "handover", 2);
    }

    @AfterEach
    void stop() {
        run.close();
    }

    @Test
    void shouldHandADynamicMembersTasksOverAsItClosesNotAfterItsSession(@TempDir Path tmp) throws Exception {
        Map<String, String> settings = Map.of("kafka." + ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, Long.toString(SESSION_TIMEOUT.toMillis()));
        StreamProcessorApp leaving = run.start(tmp.resolve("leaving"), settings);
        StreamProcessorApp staying = run.start(tmp.resolve("staying"), settings);
        await("both instances hold active tasks").atMost(WAIT).until(() -> ProcessorRun.running(leaving) && ProcessorRun.running(staying)
                && !taskIds(leaving).isEmpty() && !taskIds(staying).isEmpty());
        Set<TaskId> all = new HashSet<>(taskIds(leaving));
        all.addAll(taskIds(staying));

        long closed = System.nanoTime();
        run.stop(leaving);
        await("the staying instance holds every task").atMost(WAIT).until(() -> ProcessorRun.running(staying) && taskIds(staying).equals(all));
        Duration handOver = Duration.ofNanos(System.nanoTime() - closed);

        assertThat(handOver).as("hand-over after a graceful close").isLessThan(SESSION_TIMEOUT.dividedBy(2));
    }

    private static Set<TaskId> taskIds(StreamProcessorApp app) {
        return ProcessorRun.activeTasks(app).stream().map(TaskMetadata::taskId).collect(Collectors.toSet());
    }
}
