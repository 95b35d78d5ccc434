package io.devhealth.sink.postmortem;

import static io.devhealth.sink.PodStatusFixtures.device;
import static io.devhealth.sink.PodStatusFixtures.status;
import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The verdict over a seeded mix of 100 application crashes (every device Healthy, on fresh reports,
 * through the pod's end and its window) and 100 device failures (the GPU turns Unhealthy before the
 * exit, in the very second of it, or after it within the termination window), with what makes the
 * real thing hard: exits at any millisecond while {@code finishedAt} has one-second resolution (as the
 * API server stores it), reports that arrive seconds late, repeated keep-alives, and repairs after
 * the death. The verdict is read from pod-verdicts, as a consumer sees it. No application crash may be
 * called a device failure, and no device failure missed.
 *
 * <p>One seed by default (about 40 s); {@code -Ddevhealth.verdict.seeds=1,2,3} plays the three whose
 * figures docs/JOBS.md gives.
 *
 * <p>This drives the sink's writer alone (the rule lives there); the whole pipeline on the real node is
 * {@code RealNodePipelineIT}'s.
 */
@EnableKubernetesMockClient(crud = true)
class VerdictAccuracyTest {

    private static final Logger LOGGER = LoggerFactory.getLogger(VerdictAccuracyTest.class);
    private static final Duration WINDOW = Duration.ofMinutes(2);
    private static final int EACH = 100;

    KubernetesMockServer server;
    KubernetesClient client;

    private enum Cause { APPLICATION, DEVICE_BEFORE_EXIT, DEVICE_IN_EXIT_SECOND, DEVICE_AFTER_EXIT }

    static List<Long> seeds() {
        return java.util.Arrays.stream(System.getProperty("devhealth.verdict.seeds", "1").split(","))
                .map(String::strip).map(Long::valueOf).toList();
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldNeverCallAnApplicationCrashADeviceFailureNorMissADeviceFailure(long seed) {
        Random random = new Random(seed);
        MutableClock clock = MutableClock.at("2026-11-29T10:00:00Z");
        SinkMetrics metrics = new SinkMetrics(new SimpleMeterRegistry());
        MockProducer<String, TerminatedPod> kafka = new MockProducer<>(true, null, new StringSerializer(), (topic, value) -> new byte[0]);
        PodStatusWriter writer = PodStatusWriter.builder(client, clock).settings(new PodStatusWriter.Settings(WINDOW, 5))
                .api(new ApiCallPolicy(ApiCallPolicy.Settings.singleAttempt(1_000), metrics))
                .verdicts(new VerdictPublisher(kafka, "pod-verdicts", metrics)).metrics(metrics).build();

        List<Cause> causes = new ArrayList<>();
        for (int i = 0; i < 2 * EACH; i++) {
            causes.add(i < EACH ? Cause.APPLICATION : Cause.values()[1 + random.nextInt(3)]);
        }
        java.util.Collections.shuffle(causes, random);
        Map<Cause, Map<Verdict, Integer>> table = new EnumMap<>(Cause.class);
        Instant start = clock.instant();
        for (int i = 0; i < causes.size(); i++) {
            Cause cause = causes.get(i);
            String name = "job-" + seed + "-" + i;
            // Each pod on its own stretch of time, so that no window overlaps another pod's.
            clock.set(start.plus(Duration.ofMinutes(10L * i)));
            Verdict verdict = play(writer, clock, kafka, random, name, cause);
            table.computeIfAbsent(cause, c -> new EnumMap<>(Verdict.class)).merge(verdict, 1, Integer::sum);
        }

        LOGGER.info("verdict accuracy seed={} pods={} table={}", seed, causes.size(), table);
        assertThat(table.get(Cause.APPLICATION)).as("application crashes").containsOnlyKeys(Verdict.NO_DEVICE_FAILURE)
                .containsEntry(Verdict.NO_DEVICE_FAILURE, EACH);
        for (Cause cause : List.of(Cause.DEVICE_BEFORE_EXIT, Cause.DEVICE_IN_EXIT_SECOND, Cause.DEVICE_AFTER_EXIT)) {
            assertThat(table.getOrDefault(cause, Map.of())).as(cause.name()).doesNotContainKeys(Verdict.NO_DEVICE_FAILURE, Verdict.UNKNOWN);
        }
        assertThat(kafka.history()).as("one verdict per pod").hasSize(2 * EACH);
    }

    /** One pod's life and death; returns the verdict published for it. */
    private Verdict play(PodStatusWriter writer, MutableClock clock, MockProducer<String, TerminatedPod> kafka, Random random,
                         String name, Cause cause) {
        String claim = name + "-gpu";
        PodFixtures.createRunning(client, PodFixtures.podWithClaim("ml", name, "node-a", "main", "gpu", claim, "gpu"));
        Instant started = clock.instant();
        long version = 1;
        PodDeviceStatus healthy = gpu(version++, name, claim, HealthStatus.HEALTHY, null, started);
        writer.write(List.of(healthy), null);
        PodDeviceStatus last = healthy;

        // The container exits at any millisecond; the API server keeps whole seconds of it.
        Instant exit = started.plusSeconds(30 + random.nextInt(60)).plusMillis(random.nextInt(1000));
        Instant onset = switch (cause) {
            case APPLICATION -> null;
            case DEVICE_BEFORE_EXIT -> exit.minusSeconds(1 + random.nextInt(20)).minusMillis(random.nextInt(1000));
            case DEVICE_IN_EXIT_SECOND -> exit.truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
                    .plusMillis(random.nextInt(1000));
            case DEVICE_AFTER_EXIT -> exit.plusMillis(1 + random.nextInt((int) WINDOW.toMillis() - 10_000));
        };
        if (onset != null && onset.isBefore(exit)) {
            // Reported while the pod still runs, unless the report is slower than the exit.
            Instant arrives = onset.plusMillis(random.nextInt(3000));
            if (arrives.isBefore(exit)) {
                clock.set(arrives);
                last = gpu(version++, name, claim, HealthStatus.UNHEALTHY, "XID 79", onset);
                writer.write(List.of(last), healthy);
                onset = null;
            }
        }
        clock.set(exit);
        PodFixtures.markTerminated(client, "ml", name, 1 + random.nextInt(137), exit);
        if (random.nextBoolean()) {
            // A keep-alive that changes nothing, as the processor sends after a refresh.
            clock.set(exit.plusMillis(random.nextInt(5000)));
            PodDeviceStatus again = PodDeviceStatus.newBuilder(last).setVersion(version++).build();
            writer.write(List.of(again), last);
            last = again;
        }
        if (onset != null) {
            Instant arrives = (onset.isAfter(clock.instant()) ? onset : clock.instant()).plusMillis(random.nextInt(3000));
            clock.set(arrives);
            PodDeviceStatus failed = gpu(version++, name, claim, HealthStatus.UNHEALTHY, "XID 79", onset);
            writer.write(List.of(failed), last);
            last = failed;
        }
        if (cause != Cause.APPLICATION && random.nextBoolean()) {
            // Repaired before the window ends: the record keeps what the pod died with.
            Instant repaired = clock.instant().plusMillis(1 + random.nextInt(5000));
            clock.set(repaired);
            PodDeviceStatus fixed = gpu(version++, name, claim, HealthStatus.HEALTHY, null, repaired);
            writer.write(List.of(fixed), last);
            last = fixed;
        }
        Instant finishedAt = exit.truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
        clock.set(finishedAt.plus(WINDOW).plusMillis(1));
        writer.freeze("ml", name, List.of(last), null);
        List<TerminatedPod> ofPod = kafka.history().stream().map(ProducerRecord::value)
                .filter(v -> v.getPod().getName().equals(name)).toList();
        assertThat(ofPod).as("the verdict of " + name + " (" + cause + ")").hasSize(1);
        return ofPod.get(0).getVerdict();
    }

    private static PodDeviceStatus gpu(long version, String pod, String claim, HealthStatus health, String message, Instant since) {
        return status(version, "ml", pod, "main", claim, health, device("gpu-0", health, message, since));
    }
}
