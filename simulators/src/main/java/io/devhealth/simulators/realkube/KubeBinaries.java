package io.devhealth.simulators.realkube;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kubernetes binaries of one version, built by {@code scripts/kube/build.sh} into a cache outside
 * the repository on first use and reused after that.
 *
 * <p>System property {@code devhealth.kube.version}: the version (default {@value #DEFAULT_VERSION}).
 * Building needs Go ({@link #goInstalled()}); without it {@link #ensureBuilt()} fails and says so.
 */
public record KubeBinaries(String version, Path directory) {

    public static final String DEFAULT_VERSION = "v1.36.3";
    private static final Logger LOGGER = LoggerFactory.getLogger(KubeBinaries.class);
    private static final ConcurrentMap<String, KubeBinaries> BUILT = new ConcurrentHashMap<>();

    /** The version this JVM runs, from {@code devhealth.kube.version}. */
    public static String configuredVersion() {
        String version = System.getProperty("devhealth.kube.version", "");
        return version.isBlank() ? DEFAULT_VERSION : version;
    }

    /** The configured version's binaries, building them first when the cache lacks them. */
    public static KubeBinaries ensureBuilt() {
        return ensureBuilt(configuredVersion());
    }

    public static KubeBinaries ensureBuilt(String version) {
        return BUILT.computeIfAbsent(version, KubeBinaries::build);
    }

    public Path binary(String name) {
        Path path = directory.resolve(name);
        if (!Files.isExecutable(path)) {
            throw new IllegalStateException("no executable " + path + " (rerun scripts/kube/build.sh " + version + ")");
        }
        return path;
    }

    private static KubeBinaries build(String version) {
        if (!goInstalled()) {
            throw new IllegalStateException("Go is not installed: it is needed to build Kubernetes " + version
                    + " (scripts/kube/build.sh)");
        }
        Path script = repositoryRoot().resolve("scripts/kube/build.sh");
        long start = System.nanoTime();
        LOGGER.info("building kubernetes version={} script={} (a cold build takes tens of minutes)", version, script);
        Process process = null;
        try {
            process = new ProcessBuilder("bash", script.toString(), version)
                    .redirectError(ProcessBuilder.Redirect.PIPE)
                    .start();
            Process build = process;
            List<String> stdout = Collections.synchronizedList(new ArrayList<>());
            Thread progress = new Thread(() -> {
                try (BufferedReader err = new BufferedReader(
                        new InputStreamReader(build.getErrorStream(), StandardCharsets.UTF_8))) {
                    err.lines().forEach(line -> LOGGER.info("{}", line));
                } catch (IOException e) {
                    LOGGER.warn("kube build progress unreadable error={}", e.toString());
                }
            }, "kube-build-progress");
            progress.setDaemon(true);
            progress.start();
            // Read on the side, so that this thread waits in waitFor, where an interrupt reaches it.
            Thread output = new Thread(() -> {
                try (BufferedReader out = new BufferedReader(
                        new InputStreamReader(build.getInputStream(), StandardCharsets.UTF_8))) {
                    out.lines().forEach(stdout::add);
                } catch (IOException e) {
                    LOGGER.warn("kube build output unreadable error={}", e.toString());
                }
            }, "kube-build-output");
            output.setDaemon(true);
            output.start();
            int code = process.waitFor();
            output.join();
            progress.join();
            if (code != 0 || stdout.isEmpty()) {
                throw new IllegalStateException("scripts/kube/build.sh " + version + " failed with exit code " + code
                        + " (its output is in the log above)");
            }
            Path directory = Path.of(stdout.get(stdout.size() - 1));
            LOGGER.info("kubernetes binaries version={} dir={} seconds={}", version, directory,
                    (System.nanoTime() - start) / 1_000_000_000L);
            return new KubeBinaries(version, directory);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            // go build runs below bash: a caller told to stop (a demo's Ctrl-C) takes the whole build with it
            // rather than leave it compiling for minutes; a later run starts it again (the cache's markers are
            // written only once each part is complete).
            process.descendants().forEach(ProcessHandle::destroy);
            process.destroy();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while building Kubernetes", e);
        }
    }

    /**
     * The checkout this JVM runs in ({@code devhealth.repository.root}, or the first directory upwards
     * that holds the build script): where the build script, the shipped manifests and the docs are.
     */
    public static Path repositoryRoot() {
        String configured = System.getProperty("devhealth.repository.root", "");
        if (!configured.isBlank()) {
            return Path.of(configured);
        }
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("scripts/kube/build.sh"))) {
                return dir;
            }
        }
        throw new IllegalStateException("scripts/kube/build.sh not found above " + Path.of("").toAbsolutePath());
    }

    /** Whether {@code go} is on the PATH, which building the binaries needs. */
    public static boolean goInstalled() {
        String command = "go";
        String path = System.getenv().getOrDefault("PATH", "");
        for (String dir : path.split(java.io.File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, command))) {
                return true;
            }
        }
        return false;
    }
}
