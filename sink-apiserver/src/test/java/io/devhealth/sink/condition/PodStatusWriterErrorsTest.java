package io.devhealth.sink.condition;

import static io.devhealth.sink.PodStatusFixtures.T0;
import static io.devhealth.sink.PodStatusFixtures.device;
import static io.devhealth.sink.PodStatusFixtures.status;
import static io.devhealth.simulators.kube.FaultInjectingKubernetesApi.method;
import static io.devhealth.simulators.kube.FaultInjectingKubernetesApi.pathEndsWith;
import static io.devhealth.testkit.assertions.PodStatusAssert.assertThatPod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.TerminatedPod;
import io.devhealth.simulators.kube.FaultInjectingKubernetesApi;
import io.devhealth.simulators.kube.FaultInjectingKubernetesApi.Fault;
import io.devhealth.simulators.kube.FaultInjectingKubernetesApi.Request;
import io.devhealth.simulators.kube.PodFixtures;
import io.devhealth.sink.ApiCallPolicy;
import io.devhealth.sink.ApiErrorClass;
import io.devhealth.sink.SinkMetrics;
import io.devhealth.sink.WriteConflictsExhaustedException;
import io.devhealth.sink.postmortem.DevicePostMortem;
import io.devhealth.sink.postmortem.VerdictPublisher;
import io.devhealth.testkit.time.MutableClock;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The writer's reaction to each class of API-server error, on the mock with injected faults. */
class PodStatusWriterErrorsTest {

    private static final Duration WINDOW = Duration.ofMinutes(2);
    private static final Instant FINISHED = T0.plusSeconds(60);

    private final MutableClock clock = MutableClock.at("2026-11-29T10:00:00Z");
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final SinkMetrics metrics = new SinkMetrics(registry);
    private FaultInjectingKubernetesApi api;
    private KubernetesClient client;

    @BeforeEach
    void start() {
        api = FaultInjectingKubernetesApi.start();
        KubernetesClient setup = api.newClient(Duration.ofSeconds(30));
        PodFixtures.createRunning(setup, PodFixtures.podWithClaim("ml", "train-0", "node-a", "main", "gpu", "train-0-gpu-x1", "gpu"));
        // Short timeouts make the injected slow answers time out quickly; the first request warms the client up.
        client = api.newClient(Duration.ofMillis(500));
        setup.pods().inNamespace("ml").withName("train-0").get();
        api.clearRequests();
    }

    @AfterEach
    void stop() {
        api.close();
    }

    private PodStatusWriter writer() {
        return writer(null, clock);
    }

    /** {@code verdicts}: null for none. */
    private PodStatusWriter writer(VerdictPublisher verdicts, Clock clock) {
        ApiCallPolicy policy = new ApiCallPolicy(new ApiCallPolicy.Settings(1_000, 1_000, 4, Duration.ofMillis(5), Duration.ofMillis(20)), metrics);
        return PodStatusWriter.builder(client, clock).settings(new PodStatusWriter.Settings(WINDOW, 5)).api(policy).verdicts(verdicts)
                .metrics(metrics).build();
    }

    private boolean hasOurCondition() {
        return PodStatusWriter.hasCondition(pod(), PodStatusWriter.CONDITION_TYPE);
    }

    private static PodDeviceStatus unhealthy() {
        return status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY, device("gpu-0", HealthStatus.UNHEALTHY, "XID 79"));
    }

    private static PodDeviceStatus gpu(long version, HealthStatus health, String message, Instant since) {
        return status(version, "ml", "train-0", "main", "train-0-gpu-x1", health, device("gpu-0", health, message, since));
    }

    private DevicePostMortem record() {
        return client.resources(DevicePostMortem.class).inNamespace("ml").withName("train-0").get();
    }

    private Pod pod() {
        return client.pods().inNamespace("ml").withName("train-0").get();
    }

    private List<Request> patches() {
        return api.requests().stream().filter(r -> "PATCH".equals(r.method())).toList();
    }

    private double count(String name, String tag, String value) {
        var counter = registry.find(name).tag(tag, value).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void shouldDropStatusWhenPodDisappearsBeforeThePatch() {
        api.injectNext(1, method("PATCH"), Fault.status(404));

        assertThat(writer().write(unhealthy())).isEqualTo(PodStatusWriter.Outcome.POD_GONE);
        assertThat(patches()).hasSize(1);
    }

    @Test
    void shouldReReadAndRetryOnConflict() {
        api.injectNext(2, method("PATCH"), Fault.status(409));

        assertThat(writer().write(unhealthy())).isEqualTo(PodStatusWriter.Outcome.WRITTEN);

        assertThat(patches()).hasSize(3);
        assertThat(api.requests().stream().filter(r -> "GET".equals(r.method()) && r.path().contains("/pods/"))).hasSize(3);
        assertThat(hasOurCondition()).isTrue();
    }

    @Test
    void shouldGiveUpAfterTooManyConflictsSoTheWriteIsRepeatedLater() {
        api.injectNext(100, method("PATCH"), Fault.status(409));

        assertThatThrownBy(() -> writer().write(unhealthy())).isInstanceOf(WriteConflictsExhaustedException.class);
        assertThat(patches()).hasSize(5);
    }

    @Test
    void shouldReportInvalidWithTheServersAnswerAndNotRetryWhenThePodDidNotMove() {
        api.injectNext(1, method("PATCH"), Fault.status(422));

        assertThatThrownBy(() -> writer().write(unhealthy()))
                .isInstanceOf(InvalidPodStatusException.class)
                .hasMessageContaining("code=422").hasMessageContaining("reason=Invalid").hasMessageContaining("injected fault 422")
                .satisfies(e -> assertThat(((InvalidPodStatusException) e).patch()).contains(PodStatusWriter.CONDITION_TYPE));
        assertThat(patches()).hasSize(1);
        assertThat(hasOurCondition()).isFalse();
    }

    /**
     * The freeze writes the record (frozen, verdict published) and then the pod; a 409 on the pod's
     * write re-reads and retries, and the retry finds the record already frozen: it must add the
     * pod's final marker and nothing else, neither a second verdict nor a new frozen time.
     */
    @Test
    void shouldFinishAFreezeAfterAConflictWithoutPublishingOrStampingTheRecordAgain() {
        PodFixtures.markTerminated(client, "ml", "train-0", 1, FINISHED);
        clock.set(FINISHED.plusSeconds(20));
        PodDeviceStatus failed = gpu(1, HealthStatus.UNHEALTHY, "XID 79", FINISHED.plusSeconds(10));
        MockProducer<String, TerminatedPod> producer = new MockProducer<>(true, null, new StringSerializer(), (topic, value) -> new byte[0]);
        // A millisecond more at every read, as time passes between the attempts of a real write: a retry
        // that stamped the record again would stamp another time.
        PodStatusWriter writer = writer(new VerdictPublisher(producer, "devhealth.pod-verdicts", metrics),
                clock.tickingBy(Duration.ofMillis(1)));
        writer.write(List.of(failed), null);
        clock.set(FINISHED.plus(WINDOW));
        api.clearRequests();
        api.injectNext(1, method("PATCH").and(pathEndsWith("/pods/train-0/status")), Fault.status(409));

        PodStatusWriter.Result frozen = writer.freeze("ml", "train-0", List.of(failed), null);

        assertThat(frozen.frozenNow()).isTrue();
        assertThat(PodStatusWriter.isFinal(pod())).isTrue();
        assertThat(producer.history()).as("one verdict").singleElement().satisfies(verdict ->
                assertThat(record().getSpec().frozenAt()).as("frozen at the first attempt, as the verdict says")
                        .isEqualTo(verdict.value().getRecordedAt().toString()));
        assertThat(patches()).filteredOn(r -> r.path().contains("/devicepostmortems/")).as("the record frozen once").hasSize(1);
    }

    /**
     * A freeze whose statuses change the condition (a failure reported within the window, not yet on
     * the pod) and whose pod write meets a 409: the retry, finding the record frozen, must still bring
     * the condition to what the record says, or the pod is marked final with a condition that
     * contradicts its record for good.
     */
    @Test
    void shouldGiveThePodTheFrozenRecordsConditionWhenTheFreezeIsRetriedAfterAConflict() {
        PodFixtures.markTerminated(client, "ml", "train-0", 1, FINISHED);
        clock.set(FINISHED.plusSeconds(5));
        PodStatusWriter writer = writer();
        writer.write(List.of(gpu(1, HealthStatus.HEALTHY, null, T0)), null);
        clock.set(FINISHED.plus(WINDOW));
        api.injectNext(1, method("PATCH").and(pathEndsWith("/pods/train-0/status")), Fault.status(409));

        writer.freeze("ml", "train-0", List.of(gpu(2, HealthStatus.UNHEALTHY, "XID 79", FINISHED.plusSeconds(10))), null);

        assertThat(record().getSpec().isFrozen()).isTrue();
        assertThat(record().getSpec().verdict()).isEqualTo("DeviceFailure");
        assertThatPod(pod()).hasCondition(PodStatusWriter.FINAL_CONDITION_TYPE, "True")
                .hasCondition(PodStatusWriter.CONDITION_TYPE, "False", "DeviceUnhealthy");
    }

    @Test
    void shouldBackOffAndRetryTooManyRequestsServerErrorsAndTimeouts() {
        api.injectNext(1, method("GET"), Fault.status(503));
        api.injectNext(1, method("PATCH"), Fault.status(500));
        api.injectNext(1, method("PATCH"), Fault.slow(Duration.ofSeconds(2)));

        assertThat(writer().write(unhealthy())).isEqualTo(PodStatusWriter.Outcome.WRITTEN);

        assertThat(count("devhealth.sink.api.retries", "class", "transient")).isEqualTo(3);
        assertThat(registry.get("devhealth.sink.writes").counter().count()).isEqualTo(1);
        assertThat(hasOurCondition()).isTrue();
    }

    @Test
    void shouldWaitAtLeastTheRetryAfterTheServerAsksFor() {
        api.injectNext(1, method("PATCH"), Fault.tooManyRequests(1));
        long start = System.nanoTime();

        assertThat(writer().write(unhealthy())).isEqualTo(PodStatusWriter.Outcome.WRITTEN);

        // The backoff alone would be 5 ms; Retry-After: 1 s wins.
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
        assertThat(count("devhealth.sink.api.retries", "class", "transient")).isEqualTo(1);
    }

    @Test
    void shouldThrowUnreachableOnceRetriesAreSpentSoTheSinkPauses() {
        PodStatusWriter writer = writer();
        api.goDown();

        assertThatThrownBy(() -> writer.write(unhealthy()))
                .isInstanceOf(KubernetesClientException.class)
                .satisfies(e -> assertThat(ApiErrorClass.of(e)).isEqualTo(ApiErrorClass.UNREACHABLE));
        assertThat(count("devhealth.sink.api.retries", "class", "unreachable")).isEqualTo(3);

        api.comeBack();
        assertThat(writer.write(unhealthy())).isEqualTo(PodStatusWriter.Outcome.WRITTEN);
    }

    @Test
    void shouldLeaveEveryKubeletFieldAsItWasUnderInjectedFailures() {
        ContainerStatus before = pod().getStatus().getContainerStatuses().get(0);
        api.injectNext(1, method("PATCH"), Fault.status(409));
        api.injectNext(1, method("PATCH"), Fault.status(503));

        writer().write(unhealthy());

        ContainerStatus after = pod().getStatus().getContainerStatuses().get(0);
        assertThat(hasOurCondition()).isTrue();
        assertThat(after).isEqualTo(before);
        assertThat(pod().getStatus().getConditions()).filteredOn(c -> !c.getType().startsWith("devhealth.io/"))
                .extracting(c -> c.getType() + "=" + c.getStatus())
                .containsExactly("PodScheduled=True", "Initialized=True", "ContainersReady=True", "Ready=True");
    }
}
