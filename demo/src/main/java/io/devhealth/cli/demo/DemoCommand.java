package io.devhealth.cli.demo;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import io.devhealth.cli.QueryCommand;
import io.devhealth.simulators.dra.DeviceState;
import io.devhealth.simulators.kube.PodFixtures;
import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.KubeBinaries;
import io.devhealth.simulators.realkube.RealNode;
import io.devhealth.sink.condition.PodStatusWriter;
import io.devhealth.sink.postmortem.DevicePostMortem;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code devhealth demo}: the whole pipeline on an embedded default — no Docker, no cluster, no
 * network — playing three stories: a batch job's GPU fails and the job dies (its DevicePostMortem record
 * and pod condition, frozen, and the query that explains it); a driver goes silent (Unknown after the
 * timeout, found eagerly); and recovery. With {@code --real-kubernetes} a fourth ({@link JobRetryStory})
 * follows on real Kubernetes binaries: the Job controller and the scheduler act on devhealth's verdict.
 * The embedded API server has no controllers, so that story cannot run on it.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Run the whole pipeline in this process (in-process Kafka, simulated GPU nodes, local Kubernetes API) "
                + "and play a GPU failure under a batch job, a silent driver, and recovery.")
public final class DemoCommand implements Callable<Integer> {

    private static final String NAMESPACE = "ml-team";
    private static final String XID = "XID 79: GPU has fallen off the bus";

    @Option(names = "--nodes", defaultValue = "3", description = "Simulated GPU nodes (default: ${DEFAULT-VALUE}).")
    int nodes;

    @Option(names = "--gpus", defaultValue = "4", description = "GPUs per node, one batch job each (default: ${DEFAULT-VALUE}).")
    int gpus;

    @Option(names = "--device-timeout", defaultValue = "PT6S",
            description = "health_check_timeout_seconds the simulated drivers announce (ISO-8601, default: ${DEFAULT-VALUE}).")
    Duration deviceTimeout;

    @Option(names = "--termination-window", defaultValue = "PT10S",
            description = "How long after a job ends an Unhealthy report still applies before its status is frozen "
                    + "(production default 2 min; default here: ${DEFAULT-VALUE}).")
    Duration terminationWindow;

    @Option(names = "--timeout", defaultValue = "PT90S", description = "How long to wait for each step (default: ${DEFAULT-VALUE}).")
    Duration stepTimeout;

    @Option(names = "--verbose", description = "Show the services' logs (on stderr) between the story's lines.")
    boolean verbose;

    @Option(names = "--keep-running", description = "Keep the pipeline running after the story, to explore with kubectl and "
            + "devhealth query; stop with Ctrl-C.")
    boolean keepRunning;

    @Option(names = "--real-kubernetes", description = "Also play story 4 on real Kubernetes (etcd, kube-apiserver, "
            + "kube-controller-manager, kube-scheduler and a kubelet, built from source with Go on first use, which takes "
            + "tens of minutes): a Job retries on another GPU without spending its retry budget.")
    boolean realKubernetes;

    private final Narrator narrator = new Narrator(System.out);
    private final PrintStream out = narrator.out();
    private final List<String> summary = new ArrayList<>();

    /** How long a stop signal waits for the demo to close what it started before it kills what is left. */
    public static final Duration STOP_GRACE = Duration.ofSeconds(60);

    private final CountDownLatch closed = new CountDownLatch(1);
    private volatile boolean stopping;

    /**
     * Plays the stories, and on SIGTERM, SIGINT (Ctrl-C) or SIGHUP (a closed terminal) at any moment,
     * with {@code --keep-running} or without, closes everything it started before the JVM exits.
     *
     * <p>The JVM exits once its shutdown hooks return, whatever its other threads are doing, so the
     * hook cannot merely tell the demo to stop: it interrupts the demo's thread, which leaves whatever
     * it was doing through its try-with-resources blocks (the real cluster's processes, the pipeline),
     * and waits for that, up to {@link #STOP_GRACE}. Past that, it kills the processes still running
     * below this JVM, as a last resort: they must not outlive it.
     */
    @Override
    public Integer call() throws Exception {
        Thread demo = Thread.currentThread();
        Thread hook = new Thread(() -> stop(demo), "demo-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            return play();
        } catch (Exception e) {
            if (!stopping) {
                throw e;
            }
            out.println();
            out.println("Stopped: everything the demo started is closed.");
            return 143;
        } finally {
            closed.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // The hook is running (it is what stopped the demo), or another one is: nothing to remove.
            }
        }
    }

    private void stop(Thread demo) {
        stopping = true;
        demo.interrupt();
        try {
            if (closed.await(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<ProcessHandle> left = ProcessHandle.current().descendants().toList();
        System.err.printf("devhealth demo: not closed within %d s of the stop signal; killing the %d processes it still runs%n",
                STOP_GRACE.toSeconds(), left.size());
        left.forEach(ProcessHandle::destroyForcibly);
    }

    private Integer play() throws Exception {
        if (!verbose) {
            // The story is told on stdout; the services' own logs would drown it.
            LoggerContext logging = (LoggerContext) LoggerFactory.getILoggerFactory();
            logging.getLoggerList().stream().filter(l -> l.getLevel() != null).forEach(l -> l.setLevel(Level.ERROR));
        }
        Path workDir = Files.createTempDirectory("dh-demo");
        KubeBinaries binaries = null;
        if (realKubernetes) {
            step("story 4 runs on real Kubernetes %s: building it from source with Go unless cached under "
                    + "~/.cache/devhealth/kube (a cold build takes tens of minutes) ...", KubeBinaries.configuredVersion());
            binaries = KubeBinaries.ensureBuilt();
            step("Kubernetes binaries: %s", binaries.directory());
        }
        step("starting: in-process Kafka, %d simulated nodes x %d GPUs (fake DRA drivers + kubelets on unix sockets), "
                + "collectors, processor, sink, local Kubernetes API", nodes, gpus);
        EmbeddedPipeline.Options options = EmbeddedPipeline.Options.builder(workDir).nodes(nodes).devicesPerNode(gpus)
                .partitions(3).terminationWindow(terminationWindow).build();
        try (EmbeddedPipeline pipeline = EmbeddedPipeline.start(options)) {
            KubernetesClient kube = pipeline.kubernetes();
            step("up: kafka=%s kubernetes=%s query-api=%s", pipeline.bootstrapServers(), pipeline.kubernetesUrl(), pipeline.queryUrl());

            Map<String, List<BatchJob>> jobs = scheduleJobs(pipeline, kube);
            BatchJob victim = jobs.get(pipeline.nodes().get(0).name()).get(0);
            await("every job's pod to carry devhealth.io/DevicesHealthy=True", () -> jobs.values().stream().flatMap(List::stream)
                    .allMatch(job -> job.condition(kube).map(c -> "True".equals(c.getStatus())).orElse(false))
                    ? Optional.of(true) : Optional.empty());
            step("%d batch jobs running, every GPU healthy", jobs.values().stream().mapToInt(List::size).sum());

            failBatchJob(pipeline, kube, victim);
            silenceDriver(pipeline, kube, jobs.get(pipeline.nodes().get(pipeline.nodes().size() - 1).name()).get(0));
            recover(pipeline, kube, victim);
            if (binaries == null) {
                out.println();
                step("STORY 4 - a Job retries on another GPU without spending its retry budget: it needs the real Job "
                        + "controller and scheduler; play it with ./devhealth demo --real-kubernetes (needs Go)");
                printSummary(pipeline, victim, List.of());
                keepRunningIfAsked();
                return 0;
            }
            out.println();
            Path logs = workDir.resolve("kube-logs");
            step("starting real Kubernetes %s (logs in %s) and, on the same Kafka, a devhealth pipeline for its node",
                    binaries.version(), logs);
            try (ControlPlane plane = ControlPlane.start(binaries, workDir.resolve("control-plane"), logs);
                 RealNode node = RealNode.start(plane, ControlPlane.NODE_NAMES.get(0), 2, workDir.resolve("real-node"), logs);
                 JobRetryStory story = JobRetryStory.start(plane, node, pipeline.kafka(), workDir.resolve("story-4"), narrator,
                         new JobRetryStory.Timing(stepTimeout, JobRetryStory.Timing.DEFAULT.taintHold(), terminationWindow))) {
                JobRetryStory.Outcome outcome = story.play();
                summary.add(JobRetryStory.summary(outcome));
                printSummary(pipeline, victim, List.of(
                        String.format("kubectl --kubeconfig %s get jobs,pods,resourceclaims,devicetaintrules,devicepostmortems -n %s",
                                plane.adminKubeconfig(), JobRetryStory.NAMESPACE),
                        String.format("kubectl --kubeconfig %s describe job %s -n %s", plane.adminKubeconfig(), JobRetryStory.JOB,
                                JobRetryStory.NAMESPACE),
                        String.format("./devhealth query pod %s/%s --server %s   # story 4", JobRetryStory.NAMESPACE,
                                DocumentedJobs.name(outcome.failedPod()), story.pipeline().queryUrl())));
                keepRunningIfAsked();
            }
        }
        return 0;
    }

    /** With {@code --keep-running}, waits until the stop signal interrupts this thread (see {@link #call()}). */
    private void keepRunningIfAsked() throws InterruptedException {
        if (keepRunning) {
            out.println("The pipeline keeps running; press Ctrl-C to stop.");
            new CountDownLatch(1).await();
        }
    }

    /** One batch job per GPU, created in the API server and reported by each node's kubelet. */
    private Map<String, List<BatchJob>> scheduleJobs(EmbeddedPipeline pipeline, KubernetesClient kube) {
        Map<String, List<BatchJob>> jobs = new LinkedHashMap<>();
        for (EmbeddedPipeline.SimulatedNode node : pipeline.nodes()) {
            List<DeviceState> snapshot = new ArrayList<>();
            List<BatchJob> onNode = new ArrayList<>();
            for (int i = 0; i < gpus; i++) {
                String device = EmbeddedPipeline.SimulatedNode.device(i);
                String name = node == pipeline.nodes().get(0) && i == 0 ? "llm-pretrain-7" : "job-" + node.name() + "-" + i;
                onNode.add(BatchJob.onDevice(NAMESPACE, name, node.name(), device));
                snapshot.add(DeviceState.healthy(node.pool(), device).withTimeoutSeconds(deviceTimeout.toSeconds()));
            }
            onNode.forEach(job -> job.createRunning(kube));
            node.kubelet().setPods(onNode.stream().map(BatchJob::podResources).toList());
            node.driver().report(snapshot);
            jobs.put(node.name(), onNode);
        }
        return jobs;
    }

    /** Story 1: the GPU under a batch job fails, the job dies, and the pod keeps the explanation. */
    private void failBatchJob(EmbeddedPipeline pipeline, KubernetesClient kube, BatchJob job) throws Exception {
        EmbeddedPipeline.SimulatedNode node = pipeline.node(job.node());
        out.println();
        step("STORY 1 - a batch job's GPU fails");
        List<DeviceState> snapshot = new ArrayList<>(node.driver().currentSnapshot());
        snapshot.set(0, DeviceState.unhealthy(node.pool(), job.device(), XID).withTimeoutSeconds(deviceTimeout.toSeconds()));
        node.driver().report(snapshot);
        step("DRA driver on %s: %s Unhealthy \"%s\"", node.name(), job.device(), XID);
        Thread.sleep(1_000);
        PodFixtures.markTerminated(kube, job.namespace(), job.name(), 1, Instant.now());
        node.kubelet().setPods(node.kubelet().pods().stream().filter(p -> !p.getName().equals(job.name())).toList());
        step("the job's container crashed (exit code 1); the kubelet released its GPU and, upstream, never updates this pod again (#132978)");
        DevicePostMortem.DeviceRecord health = await("devhealth to record the device health of the terminated pod",
                () -> job.recordedDevice(kube).filter(d -> "Unhealthy".equals(d.health())));
        step("devicepostmortem %s/%s (outlives the pod; the kubelet owns and rewrites the pod's containerStatuses): "
                + "containers[%s] %s -> %s %s since %s (%s)", job.namespace(), job.name(), job.container(), job.entryName(),
                health.resourceID(), health.health(), health.since(), health.message());
        PodCondition condition = job.condition(kube).orElseThrow();
        step("pod %s/%s condition %s=%s: \"%s\"", job.namespace(), job.name(), condition.getType(), condition.getStatus(),
                condition.getMessage());
        PodCondition frozen = await("the post-termination window (" + terminationWindow.toSeconds() + " s) to end and the record to freeze",
                () -> job.condition(kube, PodStatusWriter.FINAL_CONDITION_TYPE).filter(c -> "True".equals(c.getStatus()))
                        .filter(c -> job.postMortem(kube).map(r -> r.getSpec().isFrozen()).orElse(false)));
        step("frozen: devicepostmortem %s/%s frozen=true, pod condition %s=%s (%s)", job.namespace(), job.name(), frozen.getType(),
                frozen.getStatus(), frozen.getReason());
        out.println();
        step("post-mortem query: devhealth query pod %s/%s --server %s", job.namespace(), job.name(), pipeline.queryUrl());
        out.println();
        new CommandLine(new QueryCommand()).execute("pod", job.namespace() + "/" + job.name(), "--server", pipeline.queryUrl());
        out.println();
        summary.add(String.format("%s/%s failed on %s: %s went Unhealthy (%s); its DevicePostMortem record and pod condition keep that health, frozen",
                job.namespace(), job.name(), node.name(), job.device(), XID));
    }

    /** Story 2: a driver stops talking; devices turn Unknown at their timeout, found without waiting for traffic. */
    private void silenceDriver(EmbeddedPipeline pipeline, KubernetesClient kube, BatchJob job) throws Exception {
        EmbeddedPipeline.SimulatedNode node = pipeline.node(job.node());
        step("STORY 2 - the DRA driver on %s goes silent (stream open, nothing sent)", node.name());
        Instant silentAt = Instant.now();
        node.silence();
        PodCondition unknown = await("devices on " + node.name() + " to turn Unknown after their " + deviceTimeout.toSeconds() + " s timeout",
                () -> job.condition(kube).filter(c -> "Unknown".equals(c.getStatus())));
        long seconds = Duration.between(silentAt, Instant.now()).toSeconds();
        step("pod %s/%s: %s=Unknown %d s after the driver went quiet: \"%s\"", job.namespace(), job.name(), unknown.getType(),
                seconds, unknown.getMessage());
        step("(the %d s timeout counts from the last report that got through; the collector forwards keep-alives every %d s)",
                deviceTimeout.toSeconds(), deviceTimeout.toSeconds() / 2);
        summary.add(String.format("the driver on %s went silent: its GPUs turned Unknown %d s later (timeout %d s from the last "
                + "keep-alive), eagerly, with no other traffic needed", node.name(), seconds, deviceTimeout.toSeconds()));

        node.resume();
        step("the driver on %s talks again", node.name());
        await("the pods on " + node.name() + " to be healthy again", () -> job.condition(kube).filter(c -> "True".equals(c.getStatus())));
        step("pod %s/%s: %s=True again", job.namespace(), job.name(), PodStatusWriter.CONDITION_TYPE);
        summary.add("the driver came back: Unknown -> Healthy");
    }

    /** Story 3: the failed GPU is repaired; live pods would see it, the frozen post-mortem does not change. */
    private void recover(EmbeddedPipeline pipeline, KubernetesClient kube, BatchJob victim) throws Exception {
        EmbeddedPipeline.SimulatedNode node = pipeline.node(victim.node());
        out.println();
        step("STORY 3 - %s on %s is repaired and reports Healthy", victim.device(), node.name());
        List<DeviceState> snapshot = new ArrayList<>(node.driver().currentSnapshot());
        snapshot.set(0, DeviceState.healthy(node.pool(), victim.device()).withTimeoutSeconds(deviceTimeout.toSeconds()));
        node.driver().report(snapshot);
        BatchJob next = BatchJob.onDevice(NAMESPACE, "llm-pretrain-8", node.name(), victim.device());
        next.createRunning(kube);
        List<io.devhealth.schema.proto.podresources.v1.PodResources> pods = new ArrayList<>(node.kubelet().pods());
        pods.add(next.podResources());
        node.kubelet().setPods(pods);
        await("the new job on the repaired GPU to see it Healthy", () -> next.condition(kube).filter(c -> "True".equals(c.getStatus())));
        step("new job %s/%s on the repaired %s: %s=True", next.namespace(), next.name(), victim.device(), PodStatusWriter.CONDITION_TYPE);
        Optional<DevicePostMortem.DeviceRecord> postMortem = victim.recordedDevice(kube);
        step("the failed job's record still shows %s (condition %s): the health at the moment it died, not now",
                postMortem.map(DevicePostMortem.DeviceRecord::health).orElse("?"),
                victim.condition(kube).map(PodCondition::getStatus).orElse("?"));
        summary.add(String.format("%s was repaired: the next job sees it Healthy; the failed job's frozen record still says Unhealthy",
                victim.device()));
    }

    /** What happened, then the commands to explore with, ending with {@code more} (story 4's, where it ran). */
    private void printSummary(EmbeddedPipeline pipeline, BatchJob victim, List<String> more) {
        out.println();
        out.println("=== What happened ===");
        summary.forEach(line -> out.println("  * " + line));
        out.println();
        out.println("Explore (with --keep-running):");
        out.printf("  kubectl --server %s get pods,devicepostmortems -n %s%n", pipeline.kubernetesUrl(), victim.namespace());
        out.printf("  kubectl --server %s get events -n %s%n", pipeline.kubernetesUrl(), victim.namespace());
        out.printf("  kubectl --server %s describe pod %s -n %s%n", pipeline.kubernetesUrl(), victim.name(), victim.namespace());
        out.printf("  kubectl --server %s get devicepostmortem %s -n %s -o yaml%n", pipeline.kubernetesUrl(), victim.name(), victim.namespace());
        out.printf("  ./devhealth query pod %s/%s --server %s%n", victim.namespace(), victim.name(), pipeline.queryUrl());
        out.printf("  ./devhealth query device %s/%s/%s/%s --server %s%n", victim.node(), EmbeddedPipeline.DRIVER, victim.node(),
                victim.device(), pipeline.queryUrl());
        pipeline.metricsTargets().forEach((job, targets) ->
                targets.forEach(target -> out.printf("  curl -s http://%s/metrics   # %s%n", target, job)));
        more.forEach(line -> out.println("  " + line));
        out.printf("Finished in %d s.%n", narrator.elapsed().toSeconds());
    }

    private void step(String format, Object... args) {
        narrator.step(format, args);
    }

    private <T> T await(String what, Supplier<Optional<T>> probe) throws InterruptedException {
        step("waiting for %s ...", what);
        Instant deadline = Instant.now().plus(stepTimeout);
        while (Instant.now().isBefore(deadline)) {
            Optional<T> value = probe.get();
            if (value.isPresent()) {
                return value.get();
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("timed out after " + stepTimeout.toSeconds() + " s waiting for " + what);
    }
}
