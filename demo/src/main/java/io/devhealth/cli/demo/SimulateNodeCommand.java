package io.devhealth.cli.demo;

import io.devhealth.simulators.dra.DeviceState;
import io.devhealth.simulators.dra.FakeDraDriver;
import io.devhealth.simulators.kubelet.FakeKubelet;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code devhealth simulate-node}: one simulated GPU node for docker-compose and manual testing. A fake
 * DRA driver and a fake kubelet serve their real gRPC APIs on unix sockets (point a collector at
 * them), batch jobs are created in the Kubernetes API (when one is configured) and allocated one GPU
 * each, and every so often a GPU fails with an XID and later recovers.
 */
@Command(name = "simulate-node", mixinStandardHelpOptions = true,
        description = "Serve a simulated GPU node (fake DRA driver + fake kubelet on unix sockets) with scripted GPU failures.")
public final class SimulateNodeCommand implements Callable<Integer> {

    @Option(names = "--node", defaultValue = "gpu-node-1", description = "Node name (default: ${DEFAULT-VALUE}).")
    String node;

    @Option(names = "--gpus", defaultValue = "4", description = "GPUs on the node (default: ${DEFAULT-VALUE}).")
    int gpus;

    @Option(names = "--socket-dir", required = true, description = "Directory for dra.sock and kubelet.sock (keep the path short).")
    Path socketDir;

    @Option(names = "--namespace", defaultValue = "ml-team", description = "Namespace of the simulated batch jobs (default: ${DEFAULT-VALUE}).")
    String namespace;

    @Option(names = "--failure-every", defaultValue = "PT3M", description = "A GPU fails this often (ISO-8601, default: ${DEFAULT-VALUE}).")
    Duration failureEvery;

    @Option(names = "--recover-after", defaultValue = "PT1M", description = "A failed GPU recovers after (default: ${DEFAULT-VALUE}).")
    Duration recoverAfter;

    @Option(names = "--no-kubernetes", description = "Do not create pods in the Kubernetes API (only serve the sockets).")
    boolean noKubernetes;

    @Option(names = "--seed", defaultValue = "1", description = "Random seed of the failure script (default: ${DEFAULT-VALUE}).")
    long seed;

    @Override
    public Integer call() throws Exception {
        Files.createDirectories(socketDir);
        try (FakeDraDriver driver = FakeDraDriver.builder()
                .driverName(EmbeddedPipeline.DRIVER)
                .serviceSocket(socketDir.resolve("dra.sock"))
                .healthVersions(Set.of(FakeDraDriver.V1ALPHA1))
                .start();
             FakeKubelet kubelet = FakeKubelet.start(socketDir.resolve("kubelet.sock"))) {
            List<DeviceState> snapshot = new ArrayList<>(EmbeddedPipeline.allHealthy(node, gpus));
            driver.report(snapshot);
            List<BatchJob> jobs = new ArrayList<>();
            for (int i = 0; i < gpus; i++) {
                jobs.add(BatchJob.onDevice(namespace, "train-" + node + "-" + i, node, EmbeddedPipeline.SimulatedNode.device(i)));
            }
            kubelet.setPods(jobs.stream().map(BatchJob::podResources).toList());
            if (!noKubernetes) {
                try (KubernetesClient kube = new KubernetesClientBuilder().build()) {
                    kube.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
                            .serverSideApply();
                    jobs.forEach(job -> job.createRunning(kube));
                }
            }
            log("node %s serving %s and %s with %d GPUs and %d batch jobs", node, driver.serviceSocket(), kubelet.socket(), gpus, jobs.size());
            runFailureScript(driver, snapshot);
        }
        return 0;
    }

    private void runFailureScript(FakeDraDriver driver, List<DeviceState> snapshot) throws InterruptedException {
        Random random = new Random(seed);
        while (!Thread.currentThread().isInterrupted()) {
            Thread.sleep(failureEvery.toMillis());
            int gpu = random.nextInt(gpus);
            String device = EmbeddedPipeline.SimulatedNode.device(gpu);
            snapshot.set(gpu, DeviceState.unhealthy(node, device, "XID 79: GPU has fallen off the bus"));
            driver.report(snapshot);
            log("%s Unhealthy (XID 79)", device);
            Thread.sleep(recoverAfter.toMillis());
            snapshot.set(gpu, DeviceState.healthy(node, device));
            driver.report(snapshot);
            log("%s recovered", device);
        }
    }

    private static void log(String format, Object... args) {
        System.out.printf("%s simulate-node %s%n", Instant.now(), String.format(format, args));
    }
}
