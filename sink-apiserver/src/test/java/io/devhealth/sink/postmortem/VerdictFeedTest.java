package io.devhealth.sink.postmortem;

import static io.devhealth.sink.PodStatusFixtures.T0;
import static io.devhealth.sink.PodStatusFixtures.device;
import static io.devhealth.sink.PodStatusFixtures.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.TerminatedPod;
import io.devhealth.schema.avro.Verdict;
import io.devhealth.simulators.kube.PodFixtures;
import io.devhealth.sink.ApiCallPolicy;
import io.devhealth.sink.SinkMetrics;
import io.devhealth.sink.condition.PodStatusWriter;
import io.devhealth.testkit.time.MutableClock;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The pod-verdicts feed: one event per terminated pod with devices, when its record becomes final. */
@EnableKubernetesMockClient(crud = true)
class VerdictFeedTest {

    private static final Instant FINISHED = T0.plusSeconds(60);
    private static final Duration WINDOW = Duration.ofMinutes(2);
    private static final String TOPIC = "devhealth.pod-verdicts";

    KubernetesMockServer server;
    KubernetesClient client;

    private final MutableClock clock = MutableClock.at("2026-11-29T10:00:00Z");
    private final SinkMetrics metrics = new SinkMetrics(new SimpleMeterRegistry());
    private MockProducer<String, TerminatedPod> producer;
    private PodStatusWriter writer;

    @BeforeEach
    void createJob() {
        PodFixtures.createRunning(client, PodFixtures.podWithClaim("ml", "train-0", "node-a", "main", "gpu", "train-0-gpu-x1", "gpu"));
        producer = new MockProducer<>(true, null, new StringSerializer(), (topic, value) -> new byte[0]);
        writer = writer(producer);
    }

    private PodStatusWriter writer(MockProducer<String, TerminatedPod> kafka) {
        return PodStatusWriter.builder(client, clock).settings(new PodStatusWriter.Settings(WINDOW, 5))
                .api(new ApiCallPolicy(ApiCallPolicy.Settings.singleAttempt(1_000), metrics))
                .verdicts(new VerdictPublisher(kafka, TOPIC, metrics)).metrics(metrics).build();
    }

    private static PodDeviceStatus gpu(long version, HealthStatus health, String message, Instant since) {
        return status(version, "ml", "train-0", "main", "train-0-gpu-x1", health, device("gpu-0", health, message, since));
    }

    private String uid() {
        return client.pods().inNamespace("ml").withName("train-0").get().getMetadata().getUid();
    }

    private DevicePostMortem record() {
        return client.resources(DevicePostMortem.class).inNamespace("ml").withName("train-0").get();
    }

    private double published(Verdict verdict) {
        return metrics.registry().get("devhealth.sink.verdicts").tag("verdict", verdict.name()).counter().count();
    }

    @Test
    void shouldPublishOneVerdictWhenTheRecordBecomesFinal() {
        PodFixtures.markTerminated(client, "ml", "train-0", 1, FINISHED);
        clock.set(FINISHED.plusSeconds(20));
        PodDeviceStatus failed = gpu(1, HealthStatus.UNHEALTHY, "XID 79", FINISHED.plusSeconds(10));
        writer.write(List.of(failed), null);
        assertThat(producer.history()).as("the verdict may still change within the window").isEmpty();

        clock.set(FINISHED.plus(WINDOW));
        assertThat(writer.freeze("ml", "train-0", List.of(failed), null).frozenNow()).isTrue();
        assertThat(writer.freeze("ml", "train-0", List.of(failed), null).frozenNow()).isFalse();

        assertThat(producer.history()).singleElement().satisfies(record -> {
            assertThat(record.topic()).isEqualTo(TOPIC);
            assertThat(record.key()).isEqualTo("ml/train-0");
            TerminatedPod verdict = record.value();
            assertThat(verdict.getId()).isEqualTo(uid());
            assertThat(verdict.getPod().getUid()).isEqualTo(uid());
            assertThat(verdict.getVerdict()).isEqualTo(Verdict.DEVICE_FAILURE);
            assertThat(verdict.getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
            assertThat(verdict.getNode()).isEqualTo("node-a");
            assertThat(verdict.getPhase()).isEqualTo("Failed");
            assertThat(verdict.getFinishedAt()).isEqualTo(FINISHED);
            assertThat(verdict.getRecordedAt()).isEqualTo(FINISHED.plus(WINDOW));
            assertThat(record.timestamp()).isEqualTo(FINISHED.plus(WINDOW).toEpochMilli());
            assertThat(verdict.getContainers()).singleElement().satisfies(container -> {
                assertThat(container.getName()).isEqualTo("main");
                assertThat(container.getExitCode()).isEqualTo(1);
                assertThat(container.getDevices()).singleElement().satisfies(d -> {
                    assertThat(d.getDevice().getDevice()).isEqualTo("gpu-0");
                    assertThat(d.getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
                    assertThat(d.getMessage()).isEqualTo("XID 79");
                    assertThat(d.getSince()).isEqualTo(FINISHED.plusSeconds(10));
                });
            });
        });
        assertThat(record().getSpec().verdict()).as("the feed says what the record says").isEqualTo("DeviceFailure");
        assertThat(published(Verdict.DEVICE_FAILURE)).isEqualTo(1);
        assertThat(published(Verdict.NO_DEVICE_FAILURE)).isZero();
    }

    @Test
    void shouldSayNoDeviceFailureForAnApplicationCrashOnHealthyDevices() {
        writer.write(List.of(gpu(1, HealthStatus.HEALTHY, null, T0)), null);
        PodFixtures.markTerminated(client, "ml", "train-0", 1, FINISHED);
        clock.set(FINISHED.plusSeconds(5));
        writer.write(List.of(gpu(2, HealthStatus.HEALTHY, null, T0)), null);

        clock.set(FINISHED.plus(WINDOW));
        writer.freeze("ml", "train-0", List.of(gpu(2, HealthStatus.HEALTHY, null, T0)), null);

        assertThat(producer.history()).singleElement().satisfies(record -> {
            assertThat(record.value().getVerdict()).isEqualTo(Verdict.NO_DEVICE_FAILURE);
            assertThat(record.value().getContainers().get(0).getExitCode()).isEqualTo(1);
        });
    }

    @Test
    void shouldFreezeAndPublishTheRecordOfAPodDeletedWithinItsWindow() {
        PodFixtures.markTerminated(client, "ml", "train-0", 1, FINISHED);
        clock.set(FINISHED.plusSeconds(5));
        writer.write(List.of(gpu(1, HealthStatus.UNHEALTHY, "XID 79", FINISHED.minusSeconds(1))), null);
        String uid = uid();
        client.pods().inNamespace("ml").withName("train-0").delete();

        clock.set(FINISHED.plus(WINDOW));
        assertThat(writer.freeze("ml", "train-0", List.of(), null).outcome()).isEqualTo(PodStatusWriter.Outcome.POD_GONE);

        assertThat(record().getSpec().isFrozen()).isTrue();
        assertThat(record().getSpec().pod().uid()).isEqualTo(uid);
        assertThat(producer.history()).singleElement().satisfies(record -> {
            assertThat(record.value().getId()).isEqualTo(uid);
            assertThat(record.value().getVerdict()).isEqualTo(Verdict.DEVICE_FAILURE);
        });
        writer.freeze("ml", "train-0", List.of(), null);
        assertThat(producer.history()).as("once").hasSize(1);
    }

    @Test
    void shouldKeepTheRecordOpenUntilKafkaHasTheVerdict() {
        MockProducer<String, TerminatedPod> down = new MockProducer<>(false, null, new StringSerializer(), (topic, value) -> new byte[0]);
        PodStatusWriter cutOff = writer(down);
        PodFixtures.markTerminated(client, "ml", "train-0", 1, FINISHED);
        clock.set(FINISHED.plusSeconds(5));
        PodDeviceStatus failed = gpu(1, HealthStatus.UNHEALTHY, "XID 79", FINISHED.minusSeconds(1));
        cutOff.write(List.of(failed), null);
        clock.set(FINISHED.plus(WINDOW));

        Thread failer = new Thread(() -> {
            while (down.history().isEmpty()) {
                Thread.onSpinWait();
            }
            down.errorNext(new org.apache.kafka.common.errors.TimeoutException("broker unreachable"));
        });
        failer.start();
        assertThatThrownBy(() -> cutOff.freeze("ml", "train-0", List.of(failed), null)).isInstanceOf(KafkaException.class);
        assertThat(record().getSpec().isFrozen()).as("not final without its verdict").isFalse();

        // The sink repeats the freeze until it is done.
        assertThat(writer.freeze("ml", "train-0", List.of(failed), null).frozenNow()).isTrue();
        assertThat(record().getSpec().isFrozen()).isTrue();
        assertThat(producer.history()).extracting(ProducerRecord::value).extracting(TerminatedPod::getVerdict)
                .containsExactly(Verdict.DEVICE_FAILURE);
    }

    /** Repeating cannot mend a refusal (here: no ACL for the topic); waiting would stall every pod behind it. */
    @Test
    void shouldFreezeTheRecordAndCountTheVerdictLostWhenKafkaRefusesIt() {
        MockProducer<String, TerminatedPod> refusing = new MockProducer<>(false, null, new StringSerializer(), (topic, value) -> new byte[0]);
        PodStatusWriter writer = writer(refusing);
        PodFixtures.markTerminated(client, "ml", "train-0", 1, FINISHED);
        clock.set(FINISHED.plusSeconds(5));
        PodDeviceStatus failed = gpu(1, HealthStatus.UNHEALTHY, "XID 79", FINISHED.minusSeconds(1));
        writer.write(List.of(failed), null);
        clock.set(FINISHED.plus(WINDOW));
        Thread refuser = new Thread(() -> {
            while (refusing.history().isEmpty()) {
                Thread.onSpinWait();
            }
            refusing.errorNext(new org.apache.kafka.common.errors.TopicAuthorizationException("not authorized"));
        });
        refuser.start();

        assertThat(writer.freeze("ml", "train-0", List.of(failed), null).frozenNow()).isTrue();

        assertThat(record().getSpec().isFrozen()).isTrue();
        assertThat(metrics.registry().get("devhealth.sink.verdicts.failed").tag("error", "TopicAuthorizationException").counter().count())
                .isEqualTo(1);
        assertThat(published(Verdict.DEVICE_FAILURE)).isZero();
    }

    @Test
    void shouldPublishNothingForAPodDevhealthNeverWrote() {
        PodFixtures.markTerminated(client, "ml", "train-0", 0, FINISHED);
        clock.set(FINISHED.plus(Duration.ofHours(1)));

        writer.freeze("ml", "train-0", List.of(), null);
        client.pods().inNamespace("ml").withName("train-0").delete();
        writer.freeze("ml", "train-0", List.of(), null);

        assertThat(producer.history()).isEmpty();
    }
}
