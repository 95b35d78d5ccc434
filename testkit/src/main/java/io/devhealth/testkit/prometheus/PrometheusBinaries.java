package io.devhealth.testkit.prometheus;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code prometheus} server and {@code promtool} on this machine's {@code PATH} (Debian's package
 * {@code prometheus} has both; CI installs it).
 *
 * <p>System property {@value #REQUIRED_PROPERTY}: when {@code true} (CI sets it) a machine without them
 * fails the test instead of skipping it, so that a CI run can never pass without checking the alert
 * rules and the dashboard against a real Prometheus.
 */
public record PrometheusBinaries(Path prometheus, Path promtool) {

    public static final String REQUIRED_PROPERTY = "devhealth.prometheus.required";
    private static final Logger LOGGER = LoggerFactory.getLogger(PrometheusBinaries.class);

    /** Both binaries; skips the calling test when they are missing, unless {@value #REQUIRED_PROPERTY} is set. */
    public static PrometheusBinaries find() {
        Optional<Path> prometheus = onPath("prometheus");
        Optional<Path> promtool = onPath("promtool");
        if (prometheus.isEmpty() || promtool.isEmpty()) {
            String why = "prometheus and promtool are not on PATH (Debian package prometheus): the alert rules and the dashboard "
                    + "cannot be checked";
            if (Boolean.getBoolean(REQUIRED_PROPERTY)) {
                throw new IllegalStateException(why + " (" + REQUIRED_PROPERTY + "=true)");
            }
            LOGGER.warn("skipping Prometheus tests reason=\"{}\"", why);
            Assumptions.abort(why);
        }
        return new PrometheusBinaries(prometheus.get(), promtool.get());
    }

    private static Optional<Path> onPath(String command) {
        return Stream.of(System.getenv().getOrDefault("PATH", "").split(":"))
                .filter(dir -> !dir.isEmpty())
                .map(dir -> Path.of(dir, command))
                .filter(Files::isExecutable)
                .findFirst();
    }
}
