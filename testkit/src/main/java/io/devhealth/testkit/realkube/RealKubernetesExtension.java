package io.devhealth.testkit.realkube;

import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.KubeBinaries;
import io.devhealth.simulators.realkube.RealNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Resolves {@link ControlPlane}, {@link RealNode} and {@link KubeBinaries} parameters; see {@link RealKubernetes}.
 * A test that needs only the binaries (kubectl, say) takes a {@link KubeBinaries} parameter and starts no cluster.
 *
 * <p>A machine without Go cannot build the binaries: the test is skipped there, unless system property
 * {@code devhealth.kube.required} is {@code true} (CI sets it), so that a CI run can never pass without
 * the real cluster.
 *
 * <p>JUnit's timeouts do not cover parameter resolution, where the cluster starts, so the start has a
 * deadline of its own: {@code devhealth.kube.start.timeout} (ISO-8601, default {@link #DEFAULT_START_TIMEOUT})
 * for the control plane and again for the node, not counting a first build of the binaries. A start that
 * failed is not tried again by the JVM's later tests: they fail at once with the same error.
 */
public final class RealKubernetesExtension implements ParameterResolver {

    private static final Logger LOGGER = LoggerFactory.getLogger(RealKubernetesExtension.class);
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(RealKubernetesExtension.class);
    /** The node every test of a JVM shares. */
    public static final String SHARED_NODE = ControlPlane.NODE_NAMES.get(0);
    private static final int SHARED_NODE_GPUS = 4;
    static final Duration DEFAULT_START_TIMEOUT = Duration.ofMinutes(5);
    /** How long a start that missed its deadline gets to stop what it had started (each process's stop grace is 10 s). */
    private static final Duration CLEANUP_TIMEOUT = Duration.ofSeconds(90);

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == ControlPlane.class || type == RealNode.class || type == KubeBinaries.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        if (type == KubeBinaries.class) {
            return binaries();
        }
        Cluster cluster = context.getRoot().getStore(NAMESPACE)
                .getOrComputeIfAbsent(Cluster.class, key -> new Cluster(), Cluster.class);
        return type == ControlPlane.class ? cluster.plane() : cluster.node();
    }

    /**
     * The configured version's binaries, built on first use; skips the calling test on a machine without Go
     * unless {@code devhealth.kube.required} is true.
     */
    public static KubeBinaries binaries() {
        if (!KubeBinaries.goInstalled() && !Boolean.getBoolean("devhealth.kube.required")) {
            String why = "Go is not installed: the real Kubernetes tests need it to build Kubernetes "
                    + KubeBinaries.configuredVersion();
            LOGGER.warn("skipping real Kubernetes tests reason=\"{}\"", why);
            Assumptions.abort(why);
        }
        return KubeBinaries.ensureBuilt();
    }

    static Duration startTimeout() {
        String configured = System.getProperty("devhealth.kube.start.timeout", "");
        return configured.isBlank() ? DEFAULT_START_TIMEOUT : Duration.parse(configured);
    }

    /**
     * Runs {@code start} in a thread of its own and waits for it up to {@code timeout}. Past the deadline it
     * interrupts the start, which then stops what it had started (ControlPlane and RealNode close themselves
     * when their start fails), waits for that, and fails with what did not start and where the logs are.
     */
    static <T extends AutoCloseable> T startWithin(String what, Duration timeout, Path logs, Supplier<T> start) {
        CompletableFuture<T> started = new CompletableFuture<>();
        Thread starter = new Thread(() -> {
            try {
                started.complete(start.get());
            } catch (Throwable e) {
                started.completeExceptionally(e);
            }
        }, "real-kube-start");
        starter.setDaemon(true);
        starter.start();
        try {
            return started.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(what + " failed to start", e.getCause());
        } catch (TimeoutException e) {
            starter.interrupt();
            try {
                starter.join(CLEANUP_TIMEOUT.toMillis());
                // It may have finished just as the deadline passed: the caller gets an error, so nothing may keep running.
                T late = started.getNow(null);
                if (late != null) {
                    late.close();
                }
            } catch (Exception closing) {
                e.addSuppressed(closing);
            }
            throw new IllegalStateException(what + " did not start within " + timeout.toSeconds() + " s (system property "
                    + "devhealth.kube.start.timeout); the components' logs are in " + logs, e);
        } catch (InterruptedException e) {
            starter.interrupt();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for " + what + " to start", e);
        }
    }

    /** What one test JVM runs, closed by JUnit's root store at the end of the run. */
    private static final class Cluster implements AutoCloseable {
        private final Path work;
        private final Path logs = Path.of("target", "real-kube").toAbsolutePath();
        private ControlPlane plane;
        private RealNode node;
        private RuntimeException failed;

        Cluster() {
            try {
                work = Files.createTempDirectory(Path.of("/tmp"), "dh-kube-");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        synchronized ControlPlane plane() {
            if (plane == null) {
                KubeBinaries binaries = binaries();
                plane = once(() -> startWithin("the real Kubernetes control plane", startTimeout(), logs,
                        () -> ControlPlane.start(binaries, work.resolve("control-plane"), logs)));
            }
            return plane;
        }

        synchronized RealNode node() {
            if (node == null) {
                ControlPlane started = plane();
                node = once(() -> startWithin("the real Kubernetes node " + SHARED_NODE, startTimeout(), logs,
                        () -> RealNode.start(started, SHARED_NODE, SHARED_NODE_GPUS, work.resolve("n1"), logs)));
            }
            return node;
        }

        /** Starts something of the cluster unless an earlier start failed, whose error it then throws again. */
        private <T> T once(Supplier<T> start) {
            if (failed != null) {
                throw new IllegalStateException("the real Kubernetes test cluster failed to start for an earlier test", failed);
            }
            try {
                return start.get();
            } catch (RuntimeException e) {
                failed = e;
                throw e;
            }
        }

        @Override
        public synchronized void close() {
            if (node != null) {
                node.close();
            }
            if (plane != null) {
                plane.close();
            }
            try (Stream<Path> files = Files.walk(work)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException | UncheckedIOException e) {
                LOGGER.warn("cannot remove test cluster dir={} error={}", work, e.toString());
            }
        }
    }
}
