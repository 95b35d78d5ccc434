package io.devhealth.sink.condition;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.simulators.kube.PodFixtures;
import io.devhealth.sink.ApiCallPolicy;
import io.devhealth.sink.SinkMetrics;
import io.devhealth.testkit.time.MutableClock;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class PodEventRecorderTest {

    KubernetesMockServer server;
    KubernetesClient client;

    private final MutableClock clock = MutableClock.at("2026-11-29T10:00:00Z");
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private Pod pod;
    private ExecutorService lane;
    private PodEventRecorder recorder;

    @BeforeEach
    void setUp() {
        pod = PodFixtures.createRunning(client, PodFixtures.podWithClaim("ml", "train-0", "node-a", "main", "gpu", "train-0-gpu-x1", "gpu"));
        lane = PodEventRecorder.lane(1, 1000);
        recorder = recorder(lane);
    }

    private PodEventRecorder recorder(ExecutorService lane) {
        SinkMetrics metrics = new SinkMetrics(registry);
        return new PodEventRecorder(client, new ApiCallPolicy(ApiCallPolicy.Settings.singleAttempt(1_000), metrics),
                metrics, clock, true, 2, Duration.ofMinutes(1), lane);
    }

    /** The Events created so far, once the lane's one thread has sent everything queued before this call. */
    private List<Event> events() throws Exception {
        lane.submit(() -> { }).get(10, TimeUnit.SECONDS);
        return created();
    }

    private List<Event> created() {
        return client.v1().events().inNamespace("ml").list().getItems().stream()
                .sorted(Comparator.comparing(Event::getMetadata, Comparator.comparing(m -> m.getName()))).toList();
    }

    @Test
    void shouldRecordUnhealthyAndRecoveredOnThePod() throws Exception {
        recorder.transition(pod, "True", "False", "gpu.example.com/node-a/gpu-0 Unhealthy: XID 79");
        clock.advance(Duration.ofSeconds(1));
        recorder.transition(pod, "False", "True", "all allocated devices are healthy");

        assertThat(events()).extracting(Event::getReason, Event::getType)
                .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple("DeviceUnhealthy", "Warning"),
                        org.assertj.core.groups.Tuple.tuple("DeviceRecovered", "Normal"));
        assertThat(events()).allSatisfy(e -> {
            assertThat(e.getInvolvedObject().getKind()).isEqualTo("Pod");
            assertThat(e.getInvolvedObject().getName()).isEqualTo("train-0");
            assertThat(e.getInvolvedObject().getUid()).isEqualTo(pod.getMetadata().getUid());
            assertThat(e.getSource().getComponent()).isEqualTo(PodEventRecorder.COMPONENT);
        });
    }

    @Test
    void shouldNotRecordTheFirstSightOfAHealthyPodNorAnUnchangedStatus() throws Exception {
        recorder.transition(pod, null, "True", "all allocated devices are healthy");
        recorder.transition(pod, "False", "False", "still broken");

        assertThat(events()).isEmpty();
    }

    @Test
    void shouldRateLimitEventsPerPodAndRefillWithTime() throws Exception {
        for (int i = 0; i < 5; i++) {
            recorder.transition(pod, i % 2 == 0 ? "True" : "False", i % 2 == 0 ? "False" : "True", "flap " + i);
        }
        assertThat(events()).hasSize(2);
        assertThat(registry.get("devhealth.sink.events").tag("result", "rate_limited").counter().count()).isEqualTo(3);

        clock.advance(Duration.ofMinutes(2));
        recorder.transition(pod, "True", "False", "again");
        assertThat(events()).hasSize(3);
    }

    @Test
    void shouldQueueEventsWithoutHoldingTheWriterAndDropWhatDoesNotFit() throws Exception {
        lane = PodEventRecorder.lane(1, 1);
        recorder = recorder(lane);
        CountDownLatch apiServerBusy = new CountDownLatch(1);
        lane.execute(() -> {
            try {
                apiServerBusy.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        for (int i = 0; i < 3; i++) {
            Pod other = PodFixtures.createRunning(client, PodFixtures.podWithClaim("ml", "train-" + (i + 1), "node-a", "main", "gpu",
                    "train-" + (i + 1) + "-gpu-x1", "gpu"));
            // Returns at once although the lane's one thread is taken: the caller is a condition writer.
            recorder.transition(other, "True", "False", "XID 79");
        }
        assertThat(registry.get("devhealth.sink.events").tag("result", "dropped").counter().count()).isEqualTo(2);

        apiServerBusy.countDown();
        // Closing gives what is queued its moment to go out.
        recorder.close();
        assertThat(lane.isTerminated()).isTrue();
        assertThat(created()).extracting(e -> e.getInvolvedObject().getName()).containsExactly("train-1");
        assertThat(registry.get("devhealth.sink.events").tag("result", "created").counter().count()).isEqualTo(1);
    }
}
