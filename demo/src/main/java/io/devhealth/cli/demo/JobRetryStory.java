package io.devhealth.cli.demo;

import static io.devhealth.cli.demo.DocumentedJobs.condition;
import static io.devhealth.cli.demo.DocumentedJobs.failed;
import static io.devhealth.cli.demo.DocumentedJobs.name;

import com.fasterxml.jackson.databind.JsonNode;
import io.devhealth.cli.QueryCommand;
import io.devhealth.processor.ProcessorConfig;
import io.devhealth.schema.OwnTaintRules;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.GpuWorkloads;
import io.devhealth.simulators.realkube.KubeBinaries;
import io.devhealth.simulators.realkube.RealNode;
import io.devhealth.simulators.realkube.Waits;
import io.devhealth.sink.SinkConfig;
import io.devhealth.sink.condition.PodStatusWriter;
import io.devhealth.sink.postmortem.DevicePostMortem;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceTaintRule;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import picocli.CommandLine;

/**
 * The demo's fourth story, on real Kubernetes ({@code devhealth demo --real-kubernetes}): the Job of
 * docs/JOBS.md runs on a GPU of the real node; the GPU fails (XID 79) under it; devhealth's condition on
 * the running pod turns False and, with retry elsewhere on, a {@code DeviceTaintRule} takes the GPU out of
 * scheduling; the container crashes; the real Job controller ignores the failure ({@code status.failed}
 * stays 0) and the real scheduler gives the replacement another GPU; the failed attempt's
 * DevicePostMortem record and {@code devhealth query pod} say {@code DeviceFailure}; the GPU is repaired
 * and the rule goes after its hold.
 *
 * <p>The story runs the whole devhealth pipeline ({@link RealNodePipeline}) against a control plane and
 * node it is given, so that the demo and its integration test play the same story on clusters of their
 * own. It leaves the Jobs in place (the demo's user may look at them); {@link #close} stops the pipeline.
 */
public final class JobRetryStory implements AutoCloseable {

    public static final String NAMESPACE = "ml-batch";
    public static final String JOB = "llm-finetune";
    static final String XID = "XID 79: GPU has fallen off the bus";
    static final String CRASH = "CUDA error: an illegal memory access was encountered";

    /**
     * How the story is timed: how long each step may take, how long a DeviceTaintRule holds at least
     * (longer than the Job controller's 10 s backoff before the replacement, so that the rule still
     * stands when the replacement is scheduled), and the post-termination window after which the failed
     * attempt's record is frozen.
     */
    public record Timing(Duration step, Duration taintHold, Duration terminationWindow) {
        public static final Timing DEFAULT = new Timing(Duration.ofSeconds(90), Duration.ofSeconds(20), Duration.ofSeconds(10));
    }

    /** What the story saw: the IT asserts on it, the demo summarises it. */
    public record Outcome(Pod failedPod, DeviceRequestAllocationResult failedDevice, DeviceTaintRule rule, Job afterFailure,
                          Pod replacement, DeviceRequestAllocationResult replacementDevice, DevicePostMortem.Spec record,
                          JsonNode queriedVerdict, Instant ruleDeletedAt) {}

    private final ControlPlane plane;
    private final RealNode node;
    private final Narrator narrator;
    private final Timing timing;
    private final KubernetesClient admin;
    private final DocumentedJobs jobs;
    private final RealNodePipeline pipeline;

    private JobRetryStory(ControlPlane plane, RealNode node, Narrator narrator, Timing timing, RealNodePipeline pipeline) {
        this.plane = plane;
        this.node = node;
        this.narrator = narrator;
        this.timing = timing;
        this.admin = plane.adminClient();
        this.jobs = new DocumentedJobs(admin, NAMESPACE, timing.step());
        this.pipeline = pipeline;
    }

    /**
     * Prepares namespace {@link #NAMESPACE} (the device class and the documented Job's claim template)
     * and starts the pipeline for {@code node} on {@code kafka}, with retry elsewhere on.
     */
    public static JobRetryStory start(ControlPlane plane, RealNode node, EmbeddedKafkaCluster kafka, Path work,
                                      Narrator narrator, Timing timing) {
        KubernetesClient admin = plane.adminClient();
        GpuWorkloads.prepare(admin, NAMESPACE);
        GpuWorkloads.claimTemplate(admin, NAMESPACE, DocumentedJobs.CLAIM_TEMPLATE, 1);
        String taintGroup = "devhealth-sink-taints-" + UUID.randomUUID().toString().substring(0, 8);
        String window = Long.toString(timing.terminationWindow().toMillis());
        Map<String, String> sinkOptions = new HashMap<>(RealNodePipeline.retryElsewhere(plane, taintGroup, timing.taintHold()));
        sinkOptions.put(SinkConfig.TERMINATION_WINDOW_MS, window);
        RealNodePipeline pipeline = RealNodePipeline.start(plane, node, kafka, work,
                Map.of(ProcessorConfig.TERMINATION_WINDOW_MS, window), sinkOptions);
        try {
            pipeline.awaitAssigned(taintGroup, timing.step());
            return new JobRetryStory(plane, node, narrator, timing, pipeline);
        } catch (RuntimeException e) {
            pipeline.close();
            throw e;
        }
    }

    public Outcome play() {
        narrator.step("STORY 4 - a Job's GPU fails: the Job retries on another GPU without spending its retry budget");
        narrator.step("real Kubernetes %s (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubelet) at %s; "
                + "node %s with %d simulated GPUs behind a DRA driver; retry elsewhere on (hold %d s)",
                KubeBinaries.configuredVersion(), plane.url(), node.name(), node.gpus(), timing.taintHold().toSeconds());

        Job job = jobs.create(JOB, null);
        narrator.step("created Job %s/%s from docs/JOBS.md: backoffLimit %d, podFailurePolicy Ignore when %s=False",
                NAMESPACE, JOB, job.getSpec().getBackoffLimit(), PodStatusWriter.CONDITION_TYPE);
        Pod first = jobs.awaitRunningPod(JOB, null, true);
        DeviceRequestAllocationResult failedDevice = jobs.allocationOf(first);
        narrator.step("pod %s runs on %s (its claim, allocated by the scheduler); devhealth's condition says True",
                name(first), failedDevice.getDevice());

        node.driver().setHealth(failedDevice.getDevice(), "Unhealthy", XID);
        narrator.step("DRA driver on %s: %s Unhealthy \"%s\"", node.name(), failedDevice.getDevice(), XID);
        PodCondition unhealthy = Waits.value("devhealth's condition to turn False on the running pod", timing.step(), () ->
                condition(jobs.current(first)).filter(c -> "False".equals(c.getStatus())));
        narrator.step("pod %s, still running: %s=False \"%s\" (before anything crashed)", name(first), unhealthy.getType(),
                unhealthy.getMessage());
        DeviceTaintRule rule = Waits.value("devhealth's DeviceTaintRule for " + failedDevice.getDevice(), timing.step(),
                () -> ownRules().stream().findFirst());
        narrator.step("DeviceTaintRule %s: %s on driver=%s pool=%s device=%s (the driver had not tainted it)",
                rule.getMetadata().getName(), rule.getSpec().getTaint().getEffect(), rule.getSpec().getDeviceSelector().getDriver(),
                rule.getSpec().getDeviceSelector().getPool(), rule.getSpec().getDeviceSelector().getDevice());

        node.runtime().exit(NAMESPACE, name(first), DocumentedJobs.CONTAINER, 1, CRASH);
        narrator.step("the container crashed: exit code 1, \"%s\"", CRASH);
        Job afterFailure = jobs.awaitDecision(JOB, first);
        narrator.step("Job controller: pod %s Failed with %s=False matches the Ignore rule: status.failed=%d of backoffLimit %d",
                name(first), unhealthy.getType(), failed(afterFailure), afterFailure.getSpec().getBackoffLimit());

        narrator.step("waiting for the replacement (the Job controller's backoff is 10 s) ...");
        Pod replacement = jobs.awaitRunningPod(JOB, first.getMetadata().getUid(), true);
        DeviceRequestAllocationResult replacementDevice = jobs.allocationOf(replacement);
        narrator.step("replacement pod %s runs on %s: the scheduler skipped the tainted %s", name(replacement),
                replacementDevice.getDevice(), failedDevice.getDevice());

        DevicePostMortem.Spec record = Waits.value("the failed attempt's DevicePostMortem record", timing.step(), () ->
                Optional.ofNullable(admin.resources(DevicePostMortem.class).inNamespace(NAMESPACE).withName(name(first)).get())
                        .map(DevicePostMortem::getSpec).filter(spec -> spec.verdict() != null));
        narrator.step("devicepostmortem %s/%s: verdict %s, health %s (\"%s\")", NAMESPACE, name(first), record.verdict(),
                record.health(), record.message());
        JsonNode queried = Waits.value("devhealth query pod to give the verdict", timing.step(), () ->
                pipeline.tryQuery("pod", NAMESPACE + "/" + name(first)).map(answer -> answer.path("verdict"))
                        .filter(verdict -> verdict.hasNonNull("verdict")));
        narrator.plain("");
        narrator.step("post-mortem query: devhealth query pod %s/%s --server %s", NAMESPACE, name(first), pipeline.queryUrl());
        narrator.plain("");
        PrintWriter printed = new PrintWriter(narrator.out(), true);
        new CommandLine(new QueryCommand()).setOut(printed).setErr(printed)
                .execute("pod", NAMESPACE + "/" + name(first), "--server", pipeline.queryUrl());
        printed.flush();
        narrator.plain("");

        node.driver().setHealth(failedDevice.getDevice(), "Healthy", "");
        narrator.step("%s is repaired and reports Healthy", failedDevice.getDevice());
        Waits.until("devhealth's DeviceTaintRule to go after its hold", timing.step(), null, () -> ownRules().isEmpty());
        Instant deleted = Instant.now();
        narrator.step("DeviceTaintRule %s deleted: the GPU is Healthy again and was kept out of scheduling %d s (hold: at least %d s)",
                rule.getMetadata().getName(), Duration.between(createdAt(rule), deleted).toSeconds(), timing.taintHold().toSeconds());
        return new Outcome(first, failedDevice, rule, afterFailure, replacement, replacementDevice, record, queried, deleted);
    }

    /** When the sink created {@code rule}, as it records it on the rule (its hold counts from then). */
    public static Instant createdAt(DeviceTaintRule rule) {
        return Instant.parse(rule.getMetadata().getAnnotations().get(OwnTaintRules.CREATED_AT));
    }

    /** The summary line the demo prints for an outcome. */
    public static String summary(Outcome outcome) {
        return String.format("Job %s/%s: its pod %s died on %s (XID 79); the Job controller did not count it (status.failed=%d) "
                        + "and devhealth's DeviceTaintRule sent the replacement %s to %s; the failed attempt's record says %s",
                NAMESPACE, JOB, name(outcome.failedPod()), outcome.failedDevice().getDevice(), failed(outcome.afterFailure()),
                name(outcome.replacement()), outcome.replacementDevice().getDevice(), outcome.record().verdict());
    }

    public RealNodePipeline pipeline() {
        return pipeline;
    }

    public DocumentedJobs jobs() {
        return jobs;
    }

    /** The DeviceTaintRules devhealth's sink manages. */
    public List<DeviceTaintRule> ownRules() {
        return admin.resources(DeviceTaintRule.class).withLabel(OwnTaintRules.MANAGED_BY_LABEL, OwnTaintRules.MANAGED_BY)
                .list().getItems();
    }

    @Override
    public void close() {
        pipeline.close();
    }
}
