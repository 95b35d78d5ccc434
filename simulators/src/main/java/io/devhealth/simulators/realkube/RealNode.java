package io.devhealth.simulators.realkube;

import io.devhealth.simulators.process.ManagedProcess;
import io.devhealth.simulators.process.Ports;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A kubelet registered with the {@link ControlPlane}, its container runtime (upstream's fake CRI) and a
 * DRA driver on upstream's kubeletplugin library that publishes GPUs for this node.
 *
 * <p>The kubelet is the real one, with its real container manager: it admits pods, prepares their
 * claims through the driver, runs the status manager that reconciles pod status every 10 s, writes
 * {@code allocatedResourcesStatus} from the driver's health stream and serves PodResources on its own
 * socket. Its root directory is a short path under {@code /tmp}: unix socket paths are limited to 107
 * bytes, and the plugin sockets live three levels below it.
 */
public final class RealNode implements AutoCloseable {

    /** The DRA driver name the test driver registers; devices are {@code gpu-0} … in pool {@link #name()}. */
    public static final String DRIVER_NAME = "gpu.devhealth.test";
    private static final Logger LOGGER = LoggerFactory.getLogger(RealNode.class);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(120);

    private final ControlPlane plane;
    private final String name;
    private final int gpus;
    private final Path root;
    private final Path logs;
    private ManagedProcess runtime;
    private ManagedProcess kubelet;
    private ManagedProcess driver;
    private FakeRuntimeControl runtimeControl;
    private DraDriverControl driverControl;

    private RealNode(ControlPlane plane, String name, int gpus, Path root, Path logs) {
        this.plane = plane;
        this.name = name;
        this.gpus = gpus;
        this.root = root;
        this.logs = logs;
    }

    /**
     * Starts a node and waits until it is Ready and its driver's ResourceSlice is published.
     *
     * @param name one of {@link ControlPlane#NODE_NAMES}
     * @param gpus how many GPUs the driver publishes
     */
    public static RealNode start(ControlPlane plane, String name, int gpus, Path root, Path logs) {
        RealNode node = new RealNode(plane, name, gpus, root, logs);
        try {
            node.startAll();
            return node;
        } catch (RuntimeException e) {
            node.close();
            throw e;
        }
    }

    private void startAll() {
        long start = System.nanoTime();
        KubeBinaries binaries = plane.binaries();
        try {
            Files.createDirectories(root);
            Files.createDirectories(logs);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Path criSocket = root.resolve("cri.sock");
        Path criControl = root.resolve("cri.control");
        runtime = ManagedProcess.start(name + "-fake-cri", List.of(binaries.binary("devhealth-fake-cri").toString(),
                "--endpoint=unix://" + criSocket, "--control-file=" + criControl, "--image-fs=" + root),
                logs.resolve(name + "-fake-cri.log"), root.resolve("cwd-fake-cri"));
        Waits.until("fake CRI control file " + criControl, START_TIMEOUT, runtime, () -> Files.exists(criControl));
        runtimeControl = new FakeRuntimeControl(read(criControl));

        Path config = writeKubeletConfig(criSocket);
        kubelet = ManagedProcess.start(name + "-kubelet", List.of(binaries.binary("kubelet").toString(),
                "--config=" + config,
                "--kubeconfig=" + plane.kubeconfig("system:node:" + name),
                "--root-dir=" + kubeletRoot(),
                "--cert-dir=" + root.resolve("kubelet-pki"),
                "--hostname-override=" + name,
                "--node-ip=127.0.0.1",
                "--v=2"), logs.resolve(name + "-kubelet.log"), root.resolve("cwd-kubelet"));
        waitUntilReady();

        Path driverControlFile = root.resolve("driver.control");
        driver = ManagedProcess.start(name + "-dra-driver", List.of(binaries.binary("devhealth-dra-driver").toString(),
                "--driver-name=" + DRIVER_NAME, "--node-name=" + name, "--devices=" + gpus,
                "--kubeconfig=" + plane.kubeconfig(ControlPlane.DRA_DRIVER_USER),
                "--registry-dir=" + pluginRegistryDirectory(),
                "--plugin-dir=" + pluginsDirectory().resolve(DRIVER_NAME),
                "--control-file=" + driverControlFile, "--v=2"), logs.resolve(name + "-dra-driver.log"), root.resolve("cwd-dra-driver"));
        Waits.until("DRA driver control file", START_TIMEOUT, driver, () -> Files.exists(driverControlFile));
        driverControl = new DraDriverControl(read(driverControlFile));
        Waits.until("ResourceSlice of " + DRIVER_NAME + " on " + name, START_TIMEOUT, driver,
                () -> !slices().isEmpty());
        LOGGER.info("node ready name={} gpus={} root={} seconds={}", name, gpus, root,
                (System.nanoTime() - start) / 1_000_000_000L);
    }

    private Path writeKubeletConfig(Path criSocket) {
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("apiVersion", "kubelet.config.k8s.io/v1beta1");
        config.put("kind", "KubeletConfiguration");
        config.put("address", "127.0.0.1");
        config.put("port", Ports.free());
        config.put("readOnlyPort", 0);
        config.put("healthzBindAddress", "127.0.0.1");
        config.put("healthzPort", Ports.free());
        config.put("containerRuntimeEndpoint", "unix://" + criSocket);
        config.put("imageServiceEndpoint", "unix://" + criSocket);
        config.put("authentication", Map.of("anonymous", Map.of("enabled", false),
                "webhook", Map.of("enabled", false)));
        config.put("authorization", Map.of("mode", "AlwaysAllow"));
        // This machine is a container on cgroup v1 without systemd: the kubelet must neither build
        // its QoS cgroup tree nor enforce allocatable, and must accept cgroup v1 and swap.
        config.put("cgroupDriver", "cgroupfs");
        config.put("cgroupsPerQOS", false);
        config.put("enforceNodeAllocatable", List.of());
        config.put("failCgroupV1", false);
        config.put("failSwapOn", false);
        config.put("protectKernelDefaults", false);
        config.put("localStorageCapacityIsolation", false);
        // The test machine's disk is shared and often fuller than the kubelet's default thresholds;
        // evicting the tests' pods for it would be a false failure.
        config.put("evictionHard", Map.of("memory.available", "1Mi", "nodefs.available", "0%",
                "nodefs.inodesFree", "0%", "imagefs.available", "0%"));
        config.put("imageGCHighThresholdPercent", 100);
        config.put("imageGCLowThresholdPercent", 99);
        config.put("resolvConf", "");
        // A pod whose first sync fails is retried after syncFrequency plus up to half of it
        // (pod_workers.go requeues with wait.Jitter(resyncInterval, 0.5)). The first sync of a pod
        // can race the Node authorizer's graph ("no relationship found between node ... and this
        // object" when the kubelet fetches the pod's ResourceClaim), and the default 1 min would
        // turn that into a 90 s stall; 10 s keeps it short. The status manager's 10 s reconcile
        // is a constant of its own and is not affected.
        config.put("syncFrequency", "10s");
        config.put("serializeImagePulls", false);
        config.put("featureGates", featureGates());
        Path file = root.resolve("kubelet-config.yaml");
        try {
            Files.writeString(file, Serialization.asYaml(config), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }

    private static Map<String, Boolean> featureGates() {
        Map<String, Boolean> gates = new LinkedHashMap<>();
        for (String gate : ControlPlane.FEATURE_GATES.split(",")) {
            String[] kv = gate.split("=");
            gates.put(kv[0], Boolean.parseBoolean(kv[1]));
        }
        return gates;
    }

    private void waitUntilReady() {
        KubernetesClient admin = plane.adminClient();
        Waits.until("node " + name + " Ready", START_TIMEOUT, kubelet, () -> {
            runtime.requireAlive();
            Node node = admin.nodes().withName(name).get();
            return node != null && node.getStatus() != null && node.getStatus().getConditions().stream()
                    .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
        });
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public String name() {
        return name;
    }

    /** How many GPUs the driver publishes. */
    public int gpus() {
        return gpus;
    }

    Path kubeletRoot() {
        return root.resolve("kubelet");
    }

    /** The kubelet's plugin registry, where drivers' {@code *-reg.sock} sockets appear. */
    public Path pluginRegistryDirectory() {
        return kubeletRoot().resolve("plugins_registry");
    }

    /** The kubelet's plugins directory; the driver's DRA socket is {@code <driver>/dra.sock} below it. */
    public Path pluginsDirectory() {
        return kubeletRoot().resolve("plugins");
    }

    /** The kubelet's own PodResources socket. */
    public Path podResourcesSocket() {
        return kubeletRoot().resolve("pod-resources").resolve("kubelet.sock");
    }

    /** The driver's health and taints, scripted by the test. */
    public DraDriverControl driver() {
        return driverControl;
    }

    /** The fake runtime: makes a container exit with a code. */
    public FakeRuntimeControl runtime() {
        return runtimeControl;
    }

    /** The ResourceSlices the driver published for this node. */
    public List<ResourceSlice> slices() {
        return plane.adminClient().resources(ResourceSlice.class).list().getItems().stream()
                .filter(s -> name.equals(s.getSpec().getNodeName()) && DRIVER_NAME.equals(s.getSpec().getDriver()))
                .toList();
    }

    /**
     * Restarts the kubelet (SIGTERM, then the same command) and waits until the node is Ready again,
     * as an operator's {@code systemctl restart kubelet} does.
     */
    public void restartKubelet() {
        kubelet.restart();
        Waits.until("kubelet process " + name + " restarted", START_TIMEOUT, kubelet, kubelet::isAlive);
        waitUntilReady();
    }

    /** The Ready condition's last heartbeat, for tests that must see the kubelet sync after a restart. */
    public NodeCondition readyCondition() {
        return plane.adminClient().nodes().withName(name).get().getStatus().getConditions().stream()
                .filter(c -> "Ready".equals(c.getType())).findFirst().orElseThrow();
    }

    public Path kubeletLog() {
        return kubelet.log();
    }

    /**
     * Stops the driver, the kubelet and the runtime, then unmounts what the kubelet mounted under its
     * root directory (see {@link Mounts}): the kubelet never does on its way out.
     */
    @Override
    public void close() {
        for (ManagedProcess process : new ManagedProcess[] {driver, kubelet, runtime}) {
            if (process != null) {
                process.stop();
            }
        }
        if (kubelet != null) {
            Mounts.unmountAll(kubeletRoot());
        }
    }
}
