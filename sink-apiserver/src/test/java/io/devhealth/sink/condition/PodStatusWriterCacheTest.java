package io.devhealth.sink.condition;

import static io.devhealth.sink.PodStatusFixtures.device;
import static io.devhealth.sink.PodStatusFixtures.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.PodRef;
import io.devhealth.simulators.kube.FaultInjectingKubernetesApi;
import io.devhealth.simulators.kube.PodFixtures;
import io.devhealth.sink.ApiCallPolicy;
import io.devhealth.sink.SinkMetrics;
import io.devhealth.sink.postmortem.ClaimAllocations;
import io.devhealth.sink.postmortem.DevicePostMortem;
import io.devhealth.testkit.time.MutableClock;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The writer with a pod cache ({@link CachedPods}): which requests it makes for a fresh copy, a miss and
 * a stale copy, and that a stale copy never writes a status to the wrong pod nor decides that nothing
 * is to be written. The cache here hands out the copies each test gives it, the sink's {@link PodCache}
 * the informer's; the API is the CRUD mock, which applies the patch's resourceVersion {@code test}.
 */
class PodStatusWriterCacheTest {

    private final MutableClock clock = MutableClock.at("2026-11-29T10:00:00Z");
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final SinkMetrics metrics = new SinkMetrics(registry);
    /** The copies the cache hands out, one per lookup; the last stays. Empty: a miss. */
    private final Deque<Pod> copies = new ArrayDeque<>();
    private FaultInjectingKubernetesApi api;
    private KubernetesClient client;

    @BeforeEach
    void start() {
        api = FaultInjectingKubernetesApi.start();
        client = api.newClient(Duration.ofSeconds(30));
        PodFixtures.createRunning(client, PodFixtures.podWithClaim("ml", "train-0", "node-a", "main", "gpu", "train-0-gpu-x1", "gpu"));
    }

    @AfterEach
    void stop() {
        api.close();
    }

    private PodStatusWriter writer() {
        ApiCallPolicy policy = new ApiCallPolicy(ApiCallPolicy.Settings.singleAttempt(10_000), metrics);
        CachedPods cache = (namespace, name) -> copies.size() > 1 ? copies.poll() : copies.peek();
        return PodStatusWriter.builder(client, clock).settings(new PodStatusWriter.Settings(Duration.ofMinutes(2), 5)).api(policy)
                .metrics(metrics).allocations(ClaimAllocations.NONE).pods(cache).build();
    }

    private Pod pod() {
        return client.pods().inNamespace("ml").withName("train-0").get();
    }

    /** The slim copy the sink's informer would hold of the pod as it is now. */
    private Pod cachedNow() {
        return PodCache.slim(pod());
    }

    private List<String> requests() {
        return api.requests().stream().map(r -> r.method()).toList();
    }

    /**
     * As the API server answers a JSON Patch whose {@code test} names a resourceVersion the pod no longer
     * has: 422. (The CRUD mock does not answer a failed test at all.) {@code copy}: the stale copy.
     */
    private void failTestsOf(Pod copy) {
        String test = "{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"" + copy.getMetadata().getResourceVersion() + "\"}";
        api.injectNext(Integer.MAX_VALUE, r -> "PATCH".equals(r.method()) && r.body() != null && r.body().contains(test),
                FaultInjectingKubernetesApi.Fault.status(422));
    }

    private double count(String name, String tag, String value) {
        var counter = registry.find(name).tag(tag, value).counter();
        return counter == null ? 0 : counter.count();
    }

    private String condition() {
        return pod().getStatus().getConditions().stream().filter(c -> PodStatusWriter.CONDITION_TYPE.equals(c.getType()))
                .map(c -> c.getStatus()).findFirst().orElse(null);
    }

    private static PodDeviceStatus unhealthy() {
        return status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY, device("gpu-0", HealthStatus.UNHEALTHY, "XID 79"));
    }

    private static PodDeviceStatus healthy() {
        return status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.HEALTHY, device("gpu-0", HealthStatus.HEALTHY, null));
    }

    /** Another writer of the pod's status (the kubelet): a condition of its own, a new resourceVersion. */
    private void kubeletWrites(String type) {
        client.pods().inNamespace("ml").withName("train-0").subresource("status").edit(p -> {
            p.getStatus().getConditions().add(new PodConditionBuilder().withType(type).withStatus("True").build());
            return p;
        });
    }

    @Test
    void shouldWriteFromAFreshCopyWithoutReadingThePod() {
        copies.add(cachedNow());
        api.clearRequests();

        assertThat(writer().write(unhealthy())).isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        List<String> requests = requests();

        assertThat(requests).containsExactly("PATCH");
        assertThat(condition()).isEqualTo("False");
        assertThat(count("devhealth.sink.pod.cache", "result", "hit")).isEqualTo(1);
    }

    @Test
    void shouldReadThePodTheCacheLacks() {
        api.clearRequests();

        assertThat(writer().write(unhealthy())).isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        List<String> requests = requests();

        assertThat(requests).containsExactly("GET", "PATCH");
        assertThat(count("devhealth.sink.pod.cache", "result", "miss")).isEqualTo(1);
    }

    @Test
    void shouldReadThePodAgainWhenTheCachedCopyIsStale() {
        copies.add(cachedNow());
        kubeletWrites("Ready");
        failTestsOf(copies.peek());
        api.clearRequests();

        assertThat(writer().write(unhealthy())).isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        List<String> requests = requests();

        assertThat(requests).as("the stale copy's test fails; the pod is read and written").containsExactly("PATCH", "GET", "PATCH");
        assertThat(condition()).isEqualTo("False");
        assertThat(pod().getStatus().getConditions()).extracting(c -> c.getType()).contains("Ready");
        assertThat(count("devhealth.sink.pod.rechecks", "reason", "conflict")).isEqualTo(1);
        assertThat(count("devhealth.sink.dead.letters", "reason", "invalid")).as("a failed test is no refusal").isZero();
    }

    @Test
    void shouldRetryFromTheCachesNewerCopyWhenItHasOne() {
        copies.add(cachedNow());
        kubeletWrites("Ready");
        failTestsOf(copies.peek());
        copies.add(cachedNow());
        api.clearRequests();

        assertThat(writer().write(unhealthy())).isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        List<String> requests = requests();

        assertThat(requests).as("no read: the informer had seen the kubelet's write").containsExactly("PATCH", "PATCH");
        assertThat(condition()).isEqualTo("False");
        assertThat(count("devhealth.sink.pod.rechecks", "reason", "conflict")).isZero();
    }

    @Test
    void shouldWriteAgainWhenTheCachedCopyPredatesTheLastWrite() {
        PodStatusWriter writer = writer();
        copies.add(cachedNow());
        writer.write(unhealthy());
        failTestsOf(copies.peek());
        api.clearRequests();

        // The informer has not delivered our own write yet (the next change came within milliseconds):
        // the copy's test fails, and the pod read decides.
        assertThat(writer.write(healthy())).isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        List<String> requests = requests();

        assertThat(condition()).isEqualTo("True");
        assertThat(requests).containsExactly("PATCH", "GET", "PATCH");
    }

    @Test
    void shouldReadThePodBeforeDecidingFromAStaleCopyThatItAlreadyShowsTheStatus() {
        PodStatusWriter writer = writer();
        writer.write(healthy());
        Pod showsHealthy = cachedNow();
        writer.write(unhealthy());
        copies.add(showsHealthy);
        api.clearRequests();

        // The copy says the pod already shows Healthy; the pod says Unhealthy, written since.
        assertThat(writer.write(healthy())).isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        List<String> requests = requests();

        assertThat(condition()).isEqualTo("True");
        assertThat(requests).containsExactly("GET", "PATCH");
        assertThat(count("devhealth.sink.pod.rechecks", "reason", "unchanged")).isEqualTo(1);
    }

    @Test
    void shouldNeverWriteTheEarlierPodsStatusToAPodReCreatedUnderTheSameName() {
        Pod earlier = cachedNow();
        String earlierUid = earlier.getMetadata().getUid();
        client.pods().inNamespace("ml").withName("train-0").withGracePeriod(0).delete();
        await().until(() -> pod() == null);
        // Same name, same node, same claim: only the UID tells the pods apart.
        PodFixtures.createRunning(client, PodFixtures.podWithClaim("ml", "train-0", "node-a", "main", "gpu", "train-0-gpu-x1", "gpu"));
        assertThat(pod().getMetadata().getUid()).isNotEqualTo(earlierUid);
        copies.add(earlier);
        failTestsOf(earlier);
        api.clearRequests();
        var ofTheEarlierPod = PodDeviceStatus.newBuilder(unhealthy()).setPod(new PodRef("ml", "train-0", earlierUid)).build();

        assertThat(writer().write(ofTheEarlierPod)).isEqualTo(PodStatusWriter.Outcome.OTHER_POD);
        List<String> requests = requests();

        assertThat(PodStatusWriter.hasCondition(pod(), PodStatusWriter.CONDITION_TYPE)).as("the new pod starts clean").isFalse();
        assertThat(requests).as("the copy's resourceVersion test fails on the new pod; the read tells them apart")
                .containsExactly("PATCH", "GET");
    }

    @Test
    void shouldReadThePodWhenTheCachedCopyIsOfAnEarlierPod() {
        Pod earlier = cachedNow();
        client.pods().inNamespace("ml").withName("train-0").withGracePeriod(0).delete();
        await().until(() -> pod() == null);
        PodFixtures.createRunning(client, PodFixtures.podWithClaim("ml", "train-0", "node-a", "main", "gpu", "train-0-gpu-x1", "gpu"));
        copies.add(earlier);
        var ofTheNewPod = PodDeviceStatus.newBuilder(unhealthy()).setPod(new PodRef("ml", "train-0", pod().getMetadata().getUid())).build();
        api.clearRequests();

        assertThat(writer().write(ofTheNewPod)).isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        List<String> requests = requests();

        assertThat(condition()).isEqualTo("False");
        assertThat(requests).containsExactly("GET", "PATCH");
        assertThat(count("devhealth.sink.pod.rechecks", "reason", "other_pod")).isEqualTo(1);
    }

    @Test
    void shouldReadATerminatedPodWhole() {
        PodFixtures.markTerminated(client, "ml", "train-0", 1, Instant.parse("2026-11-29T10:00:05Z"));
        copies.add(cachedNow());

        assertThat(writer().write(unhealthy())).isEqualTo(PodStatusWriter.Outcome.WRITTEN);

        DevicePostMortem record = client.resources(DevicePostMortem.class).inNamespace("ml").withName("train-0").get();
        assertThat(record.getSpec().containers()).singleElement().satisfies(c -> assertThat(c.exitCode()).as("from the whole pod").isEqualTo(1));
        assertThat(count("devhealth.sink.pod.rechecks", "reason", "terminated")).isEqualTo(1);
    }
}
