package io.devhealth.sink.condition;

import static io.devhealth.sink.PodStatusFixtures.device;
import static io.devhealth.sink.PodStatusFixtures.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.simulators.kube.PodFixtures;
import io.devhealth.sink.TerminatedPodWatcher;
import io.devhealth.sink.postmortem.TerminatedDeviceHealth;
import io.devhealth.testkit.time.MutableClock;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class PodCacheTest {

    KubernetesMockServer server;
    KubernetesClient client;

    private final MutableClock clock = MutableClock.at("2026-11-29T10:00:00Z");

    private Pod pod(String name) {
        return client.pods().inNamespace("ml").withName(name).get();
    }

    private static PodDeviceStatus unhealthy(String pod, String claim) {
        return status("ml", pod, "main", claim, HealthStatus.UNHEALTHY, device("gpu-0", HealthStatus.UNHEALTHY, "XID 79"));
    }

    private static PodDeviceStatus healthy(String pod, String claim) {
        return status("ml", pod, "main", claim, HealthStatus.HEALTHY, device("gpu-0", HealthStatus.HEALTHY, null));
    }

    @Test
    void shouldGiveTheWriterTheSamePatchFromTheSlimCopyAsFromTheWholePod() {
        PodStatusWriter writer = PodStatusWriter.builder(client, clock).build();
        PodFixtures.createRunning(client, PodFixtures.podWithClaim("ml", "train-0", "node-a", "main", "gpu", "train-0-gpu-x1", "gpu"));
        PodDeviceStatus unhealthy = unhealthy("train-0", "train-0-gpu-x1");
        PodDeviceStatus healthy = healthy("train-0", "train-0-gpu-x1");
        // A pod without devhealth's condition, with it, with it changed and with a container finished:
        // each patch the writer makes from the slim copy is the one it makes from the pod.
        List<Pod> stages = new java.util.ArrayList<>();
        stages.add(pod("train-0"));
        writer.write(unhealthy);
        stages.add(pod("train-0"));
        clock.advance(Duration.ofMinutes(1));
        writer.write(healthy);
        stages.add(pod("train-0"));
        PodFixtures.markTerminated(client, "ml", "train-0", 1, Instant.parse("2026-11-29T10:02:00Z"));
        stages.add(pod("train-0"));

        for (Pod whole : stages) {
            for (PodDeviceStatus status : List.of(unhealthy, healthy)) {
                Pod slim = PodCache.slim(whole);
                assertThat(writer.patch(slim, status)).as("patch of %s from rv %s", status.getSummary(), whole.getMetadata().getResourceVersion())
                        .isEqualTo(writer.patch(whole, status));
                assertThat(PodIdentity.mismatch(slim, status)).isEqualTo(PodIdentity.mismatch(whole, status));
                assertThat(TerminatedDeviceHealth.podFinishedAt(slim)).isEqualTo(TerminatedDeviceHealth.podFinishedAt(whole));
                assertThat(TerminatedPodWatcher.terminated(slim)).isEqualTo(TerminatedPodWatcher.terminated(whole));
                assertThat(PodStatusWriter.isFinal(slim)).isEqualTo(PodStatusWriter.isFinal(whole));
            }
        }
    }

    @Test
    void shouldAnswerNothingBeforeItHasSyncedThenEveryPodSlim() {
        PodFixtures.createRunning(client, PodFixtures.podWithClaim("ml", "train-0", "node-a", "main", "gpu", "train-0-gpu-x1", "gpu"));
        try (PodCache cache = new PodCache(client)) {
            assertThat(cache.get("ml", "train-0")).as("not started").isNull();

            cache.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> cache.get("ml", "train-0") != null);
            Pod cached = cache.get("ml", "train-0");
            assertThat(cached.getMetadata().getUid()).isEqualTo(pod("train-0").getMetadata().getUid());
            assertThat(cached.getSpec().getContainers()).as("slim: no container specs").isEmpty();
            assertThat(cached.getMetadata().getLabels()).isNullOrEmpty();

            PodFixtures.createRunning(client, PodFixtures.podWithClaim("ml", "train-1", "node-b", "main", "gpu", "train-1-gpu-x1", "gpu"));
            await().atMost(Duration.ofSeconds(10)).until(() -> cache.get("ml", "train-1") != null);
            PodStatusWriter.builder(client, clock).build().write(unhealthy("train-0", "train-0-gpu-x1"));
            await().atMost(Duration.ofSeconds(10)).until(() -> PodStatusWriter.hasCondition(cache.get("ml", "train-0"),
                    PodStatusWriter.CONDITION_TYPE));
            assertThat(cache.get("ml", "train-0").getMetadata().getResourceVersion()).isEqualTo(pod("train-0").getMetadata().getResourceVersion());

            client.pods().inNamespace("ml").withName("train-1").withGracePeriod(0).delete();
            await().atMost(Duration.ofSeconds(10)).until(() -> cache.get("ml", "train-1") == null);
        }
    }

    @Test
    void shouldTellTheTerminatedPodWatcherOfTerminationsAndDeletionsFromTheOneWatch() {
        PodFixtures.createRunning(client, PodFixtures.podWithClaim("ml", "done-early", "node-a", "main", "gpu", "c0", "gpu"));
        PodFixtures.markTerminated(client, "ml", "done-early", 0, Instant.parse("2026-11-29T09:00:00Z"));
        PodFixtures.createRunning(client, PodFixtures.podWithClaim("ml", "train-0", "node-a", "main", "gpu", "c1", "gpu"));
        List<String> told = new CopyOnWriteArrayList<>();
        try (PodCache cache = new PodCache(client)) {
            cache.addEventHandler(new TerminatedPodWatcher(p -> told.add("terminated " + p.getMetadata().getName()),
                    p -> told.add("deleted " + p.getMetadata().getName())));
            cache.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> told.contains("terminated done-early"));

            PodFixtures.markTerminated(client, "ml", "train-0", 1, Instant.parse("2026-11-29T10:00:00Z"));
            await().atMost(Duration.ofSeconds(10)).until(() -> told.contains("terminated train-0"));
            client.pods().inNamespace("ml").withName("train-0").withGracePeriod(0).delete();
            await().atMost(Duration.ofSeconds(10)).until(() -> told.contains("deleted train-0"));

            assertThat(told).containsExactly("terminated done-early", "terminated train-0", "deleted train-0");
        }
    }
}
