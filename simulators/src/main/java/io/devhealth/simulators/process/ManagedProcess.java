package io.devhealth.simulators.process;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One process a test runs (a component of the real test cluster, a Prometheus server), its output
 * appended to a log file that outlives the run (under {@code target/}), so that a failing test can be
 * read after the fact.
 */
public final class ManagedProcess implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(ManagedProcess.class);
    private static final Duration GRACE = Duration.ofSeconds(10);

    private final String name;
    private final List<String> command;
    private final Path log;
    private final Path directory;
    private Process process;

    private ManagedProcess(String name, List<String> command, Path log, Path directory) {
        this.name = name;
        this.command = List.copyOf(command);
        this.log = log;
        this.directory = directory;
    }

    /**
     * Starts {@code command} in {@code directory}, which is created and must be the component's own:
     * never the test's working directory (a module of this checkout). The kubelet, for one, removes
     * every file matching {@code <container log path>*} when it removes a container
     * ({@code containerLogManager.Clean}, pkg/kubelet/logs/container_log_manager.go), and the fake
     * runtime reports an empty log path: the pattern is {@code *}, relative to the kubelet's working
     * directory — run from the module, it deleted the module's pom.xml.
     */
    public static ManagedProcess start(String name, List<String> command, Path log, Path directory) {
        ManagedProcess managed = new ManagedProcess(name, command, log, directory);
        managed.launch();
        return managed;
    }

    /** The process {@link #start(String, List, Path, Path)} would start, not started yet: {@link #start()} starts it. */
    public static ManagedProcess unstarted(String name, List<String> command, Path log, Path directory) {
        return new ManagedProcess(name, command, log, directory);
    }

    private void launch() {
        try {
            Files.createDirectories(log.getParent());
            Files.createDirectories(directory);
            Files.writeString(log, "### " + String.join(" ", command) + System.lineSeparator(),
                    StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE,
                    java.nio.file.StandardOpenOption.APPEND);
            process = new ProcessBuilder(command)
                    .directory(directory.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .start();
            LOGGER.info("started component={} pid={} log={}", name, process.pid(), log);
        } catch (IOException e) {
            throw new IllegalStateException("cannot start " + name + ": " + e.getMessage(), e);
        }
    }

    public String name() {
        return name;
    }

    public Path log() {
        return log;
    }

    public boolean isAlive() {
        return process != null && process.isAlive();
    }

    /** Fails with the end of the component's log when it has exited. */
    public void requireAlive() {
        if (!isAlive()) {
            throw new IllegalStateException(name + " exited with code " + process.exitValue()
                    + "; the end of " + log + ":\n" + tail(40));
        }
    }

    /**
     * SIGTERM, then SIGKILL after a grace period, as the kubelet stops a container. Returns the exit code
     * (a JVM that ran its shutdown hooks exits 143; 137 says the grace period ran out), -1 if it was not running.
     *
     * <p>An interrupted thread stops it all the same, grace period included, and stays interrupted: an
     * interrupt is how a demo told to stop leaves what it was doing, and the processes it started must
     * still end as they do on any other way out (a kubelet killed at once leaves more behind).
     */
    public int stop() {
        if (process == null || !process.isAlive()) {
            return -1;
        }
        boolean interrupted = Thread.interrupted();
        try {
            process.destroy();
            if (!process.waitFor(GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor(GRACE.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            interrupted = true;
            process.destroyForcibly();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        int exitCode = process.isAlive() ? -1 : process.exitValue();
        LOGGER.info("stopped component={} exitCode={}", name, exitCode);
        return exitCode;
    }

    /**
     * SIGKILL at once, as a node losing power or the kernel's OOM killer ends a container: no shutdown
     * hook runs. Returns the exit code (137 for a JVM ended this way).
     */
    public int kill() {
        if (process == null) {
            throw new IllegalStateException(name + " was never started");
        }
        try {
            if (!process.destroyForcibly().waitFor(GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException(name + " still runs " + GRACE + " after SIGKILL");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while killing " + name, e);
        }
        LOGGER.info("killed component={} exitCode={}", name, process.exitValue());
        return process.exitValue();
    }

    /** Starts the same command again, after {@link #stop()} or {@link #kill()}, appending to the same log. */
    public void start() {
        if (isAlive()) {
            throw new IllegalStateException(name + " is still running");
        }
        launch();
    }

    /** Stops the process and starts the same command again, appending to the same log. */
    public void restart() {
        stop();
        launch();
    }

    public String tail(int lines) {
        try {
            // Decoded leniently: a component may print bytes that are not UTF-8.
            List<String> all = new String(Files.readAllBytes(log), StandardCharsets.UTF_8).lines().toList();
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(log unreadable: " + e.getMessage() + ")";
        }
    }

    @Override
    public void close() {
        stop();
    }
}
