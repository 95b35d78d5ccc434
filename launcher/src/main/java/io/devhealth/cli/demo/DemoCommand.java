package io.devhealth.cli.demo;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import io.devhealth.sink.SinkConfig;
import io.devhealth.testkit.dra.DeviceState;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.ResourceHealth;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code devhealth demo}: the whole pipeline on an embedded default, no Docker, no cluster, no
 * network, playing a scripted failure of a batch job's GPU.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Run the whole pipeline in this process (in-process Kafka, simulated GPU nodes, local Kubernetes API) "
                + "and play a GPU failure under a batch job.")
public final class DemoCommand implements Callable<Integer> {

    @Option(names = "--nodes", defaultValue = "3", description = "Simulated GPU nodes (default: ${DEFAULT-VALUE}).")
    int nodes;

    @Option(names = "--gpus", defaultValue = "4", description = "GPUs per node (default: ${DEFAULT-VALUE}).")
    int gpus;

    @Option(names = "--timeout", defaultValue = "PT60S", description = "How long to wait for each step (ISO-8601, default: ${DEFAULT-VALUE}).")
    Duration stepTimeout;

    @Option(names = "--verbose", description = "Show the services' logs (on stderr) between the story's lines.")
    boolean verbose;

    @Option(names = "--keep-running", description = "Keep the pipeline running after the story, to explore with kubectl; stop with Ctrl-C.")
    boolean keepRunning;

    private final PrintStream out = System.out;
    private final Instant started = Instant.now();
    private final List<String> summary = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        if (!verbose) {
            // The story is told on stdout; the services' own logs would drown it.
            LoggerContext logging = (LoggerContext) LoggerFactory.getILoggerFactory();
            logging.getLoggerList().stream().filter(l -> l.getLevel() != null).forEach(l -> l.setLevel(Level.ERROR));
        }
        Path workDir = Files.createTempDirectory("dh-demo");
        step("starting the pipeline: in-process Kafka, %d simulated nodes x %d GPUs, processor, sink, local Kubernetes API", nodes, gpus);
        try (EmbeddedPipeline pipeline = EmbeddedPipeline.start(
                new EmbeddedPipeline.Options(nodes, gpus, SinkConfig.Mode.ALL, workDir, 3))) {
            KubernetesClient kube = pipeline.kubernetes();
            step("pipeline up: kafka=%s kubernetes=%s", pipeline.bootstrapServers(), pipeline.kubernetesUrl());

            EmbeddedPipeline.SimulatedNode node = pipeline.nodes().get(0);
            BatchJob job = BatchJob.onDevice("ml-team", "train-llm-0", node.name(), EmbeddedPipeline.SimulatedNode.device(0));
            job.schedule(kube, node.kubelet());
            step("batch job %s/%s scheduled on %s with %s (claim %s, ResourceClaim %s)",
                    job.namespace(), job.name(), node.name(), job.device(), job.claimReference(), job.resourceClaim());

            ResourceHealth healthy = await("the job's GPU to show Healthy in pod status",
                    () -> job.deviceHealth(kube).filter(h -> "Healthy".equals(h.getHealth())));
            step("pod status: %s %s -> %s", job.entryName(), healthy.getResourceID(), healthy.getHealth());

            String xid = "XID 79: GPU has fallen off the bus";
            List<DeviceState> snapshot = new ArrayList<>(EmbeddedPipeline.allHealthy(node.pool(), gpus));
            snapshot.set(0, DeviceState.unhealthy(node.pool(), job.device(), xid));
            node.driver().report(snapshot);
            step("the DRA driver on %s reports %s Unhealthy: \"%s\"", node.name(), job.device(), xid);

            ResourceHealth unhealthy = await("the job's GPU to show Unhealthy in pod status",
                    () -> job.deviceHealth(kube).filter(h -> "Unhealthy".equals(h.getHealth())));
            PodCondition condition = await("the devhealth.io/DevicesHealthy condition to turn False",
                    () -> job.condition(kube).filter(c -> "False".equals(c.getStatus())));
            step("pod status: %s %s -> %s (%s)", job.entryName(), unhealthy.getResourceID(), unhealthy.getHealth(), unhealthy.getMessage());
            step("pod condition: %s=%s reason=%s message=\"%s\"", condition.getType(), condition.getStatus(), condition.getReason(),
                    condition.getMessage());

            summary.add(String.format("%s/%s on %s: %s went Healthy -> Unhealthy (%s)", job.namespace(), job.name(), node.name(),
                    job.device(), xid));
            summary.add("written by devhealth into containerStatuses[].allocatedResourcesStatus and condition " + condition.getType());
            printSummary(pipeline, job);

            if (keepRunning) {
                out.println("Pipeline keeps running; press Ctrl-C to stop.");
                CountDownLatch forever = new CountDownLatch(1);
                Runtime.getRuntime().addShutdownHook(new Thread(forever::countDown));
                forever.await();
            }
        }
        return 0;
    }

    private void printSummary(EmbeddedPipeline pipeline, BatchJob job) {
        out.println();
        out.println("=== What happened ===");
        summary.forEach(line -> out.println("  * " + line));
        out.println();
        out.println("Look at the pod as the API server holds it (with --keep-running):");
        out.printf("  kubectl --server %s get pod %s -n %s -o yaml%n", pipeline.kubernetesUrl(), job.name(), job.namespace());
        out.printf("Finished in %d s.%n", Duration.between(started, Instant.now()).toSeconds());
    }

    private void step(String format, Object... args) {
        long seconds = Duration.between(started, Instant.now()).toSeconds();
        out.printf("[%3ds] %s%n", seconds, String.format(format, args));
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
