package io.devhealth.testkit.realkube;

import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.KubeBinaries;
import io.devhealth.simulators.realkube.RealNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Resolves {@link ControlPlane} and {@link RealNode} parameters; see {@link RealKubernetes}.
 *
 * <p>A machine without Go cannot build the binaries: the test is skipped there, unless system property
 * {@code devhealth.kube.required} is {@code true} (CI sets it), so that a CI run can never pass without
 * the real cluster.
 */
public final class RealKubernetesExtension implements ParameterResolver {

    private static final Logger LOGGER = LoggerFactory.getLogger(RealKubernetesExtension.class);
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(RealKubernetesExtension.class);
    /** The node every test of a JVM shares. */
    public static final String SHARED_NODE = ControlPlane.NODE_NAMES.get(0);
    private static final int SHARED_NODE_GPUS = 4;

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == ControlPlane.class || type == RealNode.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        Cluster cluster = context.getRoot().getStore(NAMESPACE)
                .getOrComputeIfAbsent(Cluster.class, key -> new Cluster(), Cluster.class);
        return parameter.getParameter().getType() == ControlPlane.class ? cluster.plane() : cluster.node();
    }

    /** What one test JVM runs, closed by JUnit's root store at the end of the run. */
    private static final class Cluster implements AutoCloseable {
        private final Path work;
        private final Path logs = Path.of("target", "real-kube").toAbsolutePath();
        private ControlPlane plane;
        private RealNode node;

        Cluster() {
            try {
                work = Files.createTempDirectory(Path.of("/tmp"), "dh-kube-");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        synchronized ControlPlane plane() {
            if (plane == null) {
                plane = ControlPlane.start(binaries(), work.resolve("control-plane"), logs);
            }
            return plane;
        }

        private static KubeBinaries binaries() {
            if (!KubeBinaries.goInstalled() && !Boolean.getBoolean("devhealth.kube.required")) {
                String why = "Go is not installed: the real Kubernetes tests need it to build Kubernetes "
                        + KubeBinaries.configuredVersion();
                LOGGER.warn("skipping real Kubernetes tests reason=\"{}\"", why);
                Assumptions.abort(why);
            }
            return KubeBinaries.ensureBuilt();
        }

        synchronized RealNode node() {
            if (node == null) {
                node = RealNode.start(plane(), SHARED_NODE, SHARED_NODE_GPUS, work.resolve("n1"), logs);
            }
            return node;
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
