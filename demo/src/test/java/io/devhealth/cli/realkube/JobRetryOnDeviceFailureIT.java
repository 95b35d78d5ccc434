package io.devhealth.cli.realkube;

import static io.devhealth.cli.demo.DocumentedJobs.condition;
import static io.devhealth.cli.demo.DocumentedJobs.decided;
import static io.devhealth.cli.demo.DocumentedJobs.failed;
import static io.devhealth.cli.demo.DocumentedJobs.hasCondition;
import static io.devhealth.cli.demo.DocumentedJobs.name;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.cli.demo.DocumentedJobs;
import io.devhealth.cli.demo.RealNodePipeline;
import io.devhealth.processor.ProcessorConfig;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.GpuWorkloads;
import io.devhealth.simulators.realkube.KubeBinaries;
import io.devhealth.simulators.realkube.RealNode;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
import io.devhealth.testkit.realkube.RealKubernetes;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Job whose {@code podFailurePolicy} ignores pods that devhealth says died on an unhealthy GPU, run by
 * the real Job controller (kube-controller-manager) on the real node with the whole devhealth pipeline
 * writing the condition. The Job is the one docs/JOBS.md tells users to copy, read from that file.
 *
 * <p>The Job controller decides once per pod, in the first sync that sees the pod {@code Failed} while it
 * still carries the {@code batch.kubernetes.io/job-tracking} finalizer, and removes the finalizer in the
 * same sync: a condition that arrives later changes nothing. How often devhealth's condition is there in
 * time, when the device report comes before, with or after the crash, is what
 * {@link #shouldMeasureHowOftenTheConditionReachesTheJobControllerInTime} measures.
 */
@RealKubernetes
@ExtendWith(KafkaClusterExtension.class)
class JobRetryOnDeviceFailureIT {

    private static final Logger LOGGER = LoggerFactory.getLogger(JobRetryOnDeviceFailureIT.class);

    private static final String NAMESPACE = "jobs-real";
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final String XID = "XID 79: GPU has fallen off the bus";
    /** Runs per ordering; {@code -Ddevhealth.jobs.race.runs=10} for a longer measurement. */
    private static final int RACE_RUNS = Integer.getInteger("devhealth.jobs.race.runs", 3);
    /**
     * When the device report comes, in ms relative to the container's exit: negative is before it.
     * {@code -Ddevhealth.jobs.race.offsets=-2000,0,500,1000,3000} measures others.
     */
    private static final List<Long> RACE_OFFSETS_MS = Arrays.stream(
            System.getProperty("devhealth.jobs.race.offsets", "-2000,0,1000,2000,3000").split(","))
            .map(String::trim).map(Long::parseLong).toList();

    private static KubernetesClient admin;
    private static RealNodePipeline pipeline;
    private static RealNode node;
    private static DocumentedJobs jobs;

    @BeforeAll
    static void startPipeline(ControlPlane plane, RealNode realNode, EmbeddedKafkaCluster kafka, @TempDir Path work) {
        admin = plane.adminClient();
        node = realNode;
        jobs = new DocumentedJobs(admin, NAMESPACE, WAIT);
        GpuWorkloads.prepare(admin, NAMESPACE);
        GpuWorkloads.claimTemplate(admin, NAMESPACE, DocumentedJobs.CLAIM_TEMPLATE, 1);
        pipeline = RealNodePipeline.start(plane, realNode, kafka, work,
                // Every change of the driver is a change of the pod: these tests flip health on purpose.
                Map.of(ProcessorConfig.FLAP_THRESHOLD, "0"), Map.of());
    }

    @AfterAll
    static void stopPipeline() {
        if (pipeline != null) {
            pipeline.close();
        }
    }

    /** No Job, pod or claim of this class left and every GPU healthy, so that the next test finds the node as it was. */
    @AfterEach
    void cleanUp() {
        for (int i = 0; i < node.gpus(); i++) {
            node.driver().setHealth("gpu-" + i, "Healthy", "");
        }
        jobs.deleteAllAndWait();
    }

    @Test
    void shouldRetryWithoutCountingWhenThePodDiesOnAnUnhealthyGpu() {
        Job job = jobs.create("train-xid", 1);
        assertThat(job.getSpec().getPodReplacementPolicy())
                .as("the API server's default for a Job with a podFailurePolicy").isEqualTo("Failed");
        Pod first = jobs.awaitRunningPod("train-xid", null, true);
        String device = jobs.allocationOf(first).getDevice();

        node.driver().setHealth(device, "Unhealthy", XID);
        await("devhealth's condition turns False on the running pod").atMost(WAIT)
                .until(() -> condition(jobs.current(first)).map(PodCondition::getStatus).orElse(null), "False"::equals);
        node.runtime().exit(NAMESPACE, name(first), "main", 1, "CUDA error: an illegal memory access");
        Job decided = jobs.awaitDecision("train-xid", first);

        assertThat(failed(decided)).as("status.failed: the failure is not counted").isZero();
        assertThat(hasCondition(decided, "Failed")).isFalse();
        assertThat(hasCondition(decided, "FailureTarget")).isFalse();
        // The replacement comes after the controller's pod-failure backoff (10 s for a first failure):
        // an ignored failure still enters the backoff record. Which GPU it gets is
        // JobRetryStoryIT's question (retry elsewhere), so its condition is not asserted.
        Pod replacement = jobs.awaitRunningPod("train-xid", first.getMetadata().getUid(), false);
        assertThat(jobs.allocationOf(replacement).getDevice()).as("the replacement holds a GPU of its own claim").isNotBlank();
        Job retrying = jobs.job("train-xid");
        assertThat(failed(retrying)).isZero();
        assertThat(retrying.getStatus().getActive()).isEqualTo(1);
        assertThat(hasCondition(retrying, "Failed")).isFalse();
    }

    @Test
    void shouldCountAnApplicationCrashOnHealthyGpusAndFailTheJobAtItsBackoffLimit() {
        jobs.create("train-crash", 1);
        Pod first = jobs.awaitRunningPod("train-crash", null, true);
        node.runtime().exit(NAMESPACE, name(first), "main", 1, "Traceback: ZeroDivisionError");
        Job afterFirst = jobs.awaitDecision("train-crash", first);
        assertThat(failed(afterFirst)).as("status.failed counts the crash").isEqualTo(1);
        assertThat(hasCondition(afterFirst, "Failed")).as("one failure is within backoffLimit 1").isFalse();

        Pod second = jobs.awaitRunningPod("train-crash", first.getMetadata().getUid(), true);
        node.runtime().exit(NAMESPACE, name(second), "main", 1, "Traceback: ZeroDivisionError");
        Job afterSecond = jobs.awaitDecision("train-crash", second);
        assertThat(failed(afterSecond)).isEqualTo(2);
        await("the Job fails: backoffLimit exceeded").atMost(WAIT).untilAsserted(() ->
                assertThat(jobs.job("train-crash").getStatus().getConditions()).anySatisfy(c -> {
                    assertThat(c.getType()).isEqualTo("Failed");
                    assertThat(c.getStatus()).isEqualTo("True");
                    assertThat(c.getReason()).isEqualTo("BackoffLimitExceeded");
                }));
    }

    /**
     * The race between devhealth's condition and the Job controller's decision, measured: for each
     * offset of the device report from the container's exit, {@link #RACE_RUNS} Jobs (backoffLimit 0)
     * whose only pod dies on the GPU; a run is won when the Job controller ignored the failure. The
     * figures are printed; asserted is only what must always hold: a pod that already carried the
     * condition when the Job controller could first see it Failed is never counted, and a failure is
     * ignored only if the condition was on the pod before the controller decided.
     */
    @Test
    void shouldMeasureHowOftenTheConditionReachesTheJobControllerInTime() {
        List<RaceRun> runs = new ArrayList<>();
        int sequence = 0;
        for (long offset : RACE_OFFSETS_MS) {
            for (int i = 0; i < RACE_RUNS; i++) {
                RaceRun run = race("race-" + sequence++, offset);
                runs.add(run);
                LOGGER.info("race run offsetMs={} ignored={} exitToFailedMs={} reportToConditionMs={} failedToDecidedMs={} "
                                + "conditionWhenFailed={} conditionBeforeDecision={}", offset, run.won(), run.exitToFailedMs(),
                        run.reportToConditionMs(), run.failedToDecisionMs(), run.conditionWhenFailed(),
                        run.conditionBeforeDecision());
                for (int g = 0; g < node.gpus(); g++) {
                    node.driver().setHealth("gpu-" + g, "Healthy", "");
                }
                jobs.deleteAllAndWait();
            }
        }
        printFigures(runs);
        assertThat(runs).filteredOn(RaceRun::conditionWhenFailed)
                .as("a pod seen Failed with devhealth's condition False is never counted").allMatch(RaceRun::won);
        assertThat(runs).filteredOn(RaceRun::won)
                .as("an ignored failure had the condition on the pod before the Job controller decided")
                .allMatch(RaceRun::conditionBeforeDecision);
    }

    /** One run: the report at {@code offsetMs} from the exit (negative: before it), then the Job controller's verdict. */
    private RaceRun race(String jobName, long offsetMs) {
        jobs.create(jobName, 0);
        Pod pod = jobs.awaitRunningPod(jobName, null, true);
        String device = jobs.allocationOf(pod).getDevice();
        PodTimeline timeline = new PodTimeline(pod.getMetadata().getUid());
        try (Watch ignored = admin.pods().inNamespace(NAMESPACE).withName(name(pod)).watch(timeline)) {
            long reportAt;
            long exitAt;
            if (offsetMs < 0) {
                reportAt = report(device);
                sleep(-offsetMs);
                exitAt = exit(pod);
            } else {
                exitAt = exit(pod);
                sleep(offsetMs);
                reportAt = report(device);
            }
            Job decided = jobs.awaitDecision(jobName, pod);
            await("the watch saw the decision").atMost(WAIT).until(() -> timeline.decidedAt.get() != 0);
            // A late condition still comes, on the failed pod: its latency is measured either way.
            await("the watch saw devhealth's condition False").atMost(WAIT).until(() -> timeline.conditionFalseAt.get() != 0);
            boolean won = failed(decided) == 0 && !hasCondition(decided, "Failed");
            long conditionAt = timeline.conditionFalseAt.get();
            return new RaceRun(offsetMs, won, millis(timeline.failedAt.get() - exitAt),
                    millis(conditionAt - reportAt),
                    millis(timeline.decidedAt.get() - timeline.failedAt.get()), timeline.conditionWhenFailed.get(),
                    conditionAt != 0 && conditionAt < timeline.decidedAt.get());
        }
    }

    private static long report(String device) {
        long at = System.nanoTime();
        node.driver().setHealth(device, "Unhealthy", XID);
        return at;
    }

    private static long exit(Pod pod) {
        long at = System.nanoTime();
        node.runtime().exit(NAMESPACE, name(pod), "main", 1, "CUDA error: an illegal memory access");
        return at;
    }

    private static void printFigures(List<RaceRun> runs) {
        StringBuilder out = new StringBuilder(String.format(Locale.ROOT,
                "%njob retry race (%d runs per offset; report offset from the container's exit; kube %s)%n",
                RACE_RUNS, KubeBinaries.configuredVersion()));
        out.append(String.format(Locale.ROOT, "%10s %8s %16s %22s %24s %24s%n", "offset ms", "ignored",
                "cond. at Failed", "exit->Failed ms (med)", "report->cond. ms (med)", "Failed->decided ms (med)"));
        for (long offset : RACE_OFFSETS_MS) {
            List<RaceRun> of = runs.stream().filter(r -> r.offsetMs() == offset).toList();
            out.append(String.format(Locale.ROOT, "%10d %4d/%-3d %12d/%-3d %22d %24d %24d%n", offset,
                    of.stream().filter(RaceRun::won).count(), of.size(),
                    of.stream().filter(RaceRun::conditionWhenFailed).count(), of.size(),
                    median(of.stream().map(RaceRun::exitToFailedMs).toList()),
                    median(of.stream().map(RaceRun::reportToConditionMs).toList()),
                    median(of.stream().map(RaceRun::failedToDecisionMs).toList())));
        }
        System.out.print(out);
    }

    private static long median(List<Long> values) {
        List<Long> sorted = values.stream().sorted().toList();
        return sorted.isEmpty() ? -1 : sorted.get(sorted.size() / 2);
    }

    /**
     * What the pod's watch saw, in {@link System#nanoTime()}: when it was first Failed (and whether
     * devhealth's condition was False in that same object), when the condition turned False, and when
     * the Job controller removed its finalizer, which it does in the sync that decided.
     */
    private static final class PodTimeline implements Watcher<Pod> {
        private final String uid;
        final AtomicLong failedAt = new AtomicLong();
        final AtomicLong conditionFalseAt = new AtomicLong();
        final AtomicLong decidedAt = new AtomicLong();
        final AtomicReference<Boolean> conditionWhenFailed = new AtomicReference<>(false);

        PodTimeline(String uid) {
            this.uid = uid;
        }

        @Override
        public void eventReceived(Action action, Pod pod) {
            long now = System.nanoTime();
            if (!uid.equals(pod.getMetadata().getUid())) {
                return;
            }
            boolean conditionFalse = condition(pod).map(c -> "False".equals(c.getStatus())).orElse(false);
            if (conditionFalse) {
                conditionFalseAt.compareAndSet(0, now);
            }
            if ("Failed".equals(pod.getStatus().getPhase()) && failedAt.compareAndSet(0, now)) {
                conditionWhenFailed.set(conditionFalse);
            }
            if (failedAt.get() != 0 && decided(pod)) {
                decidedAt.compareAndSet(0, now);
            }
        }

        @Override
        public void onClose(WatcherException cause) {
            if (cause != null) {
                LOGGER.warn("pod watch closed uid={} error=\"{}\"", uid, cause.toString());
            }
        }
    }

    private record RaceRun(long offsetMs, boolean won, long exitToFailedMs, long reportToConditionMs,
                           long failedToDecisionMs, boolean conditionWhenFailed, boolean conditionBeforeDecision) {}

    private static long millis(long nanos) {
        return Math.round(nanos / 1e6);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
