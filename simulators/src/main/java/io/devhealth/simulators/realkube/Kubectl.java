package io.devhealth.simulators.realkube;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The kubectl built with the control plane ({@link KubeBinaries}), run against the real API server as
 * its admin or against another server (the embedded API of the demo), for tests that check what a user
 * sees with kubectl.
 */
public final class Kubectl {

    /** What one kubectl command printed (stdout and stderr together) and how it exited. */
    public record Result(int exitCode, String output) {
    }

    private static final long TIMEOUT_SECONDS = 60;

    private final Path binary;
    private final List<String> target;
    private final Path home;

    private Kubectl(Path binary, List<String> target, Path home) {
        this.binary = binary;
        this.target = List.copyOf(target);
        this.home = home;
    }

    /** kubectl as the control plane's admin. */
    public static Kubectl admin(ControlPlane plane) {
        return new Kubectl(plane.binaries().binary("kubectl"), List.of("--kubeconfig", plane.adminKubeconfig().toString()), null);
    }

    /**
     * kubectl against {@code server} with an empty kubeconfig and {@code home} as its HOME, so that
     * nothing the machine has configured can interfere.
     */
    public static Kubectl against(ControlPlane plane, String server, Path home) {
        Path kubeconfig = home.resolve("kubeconfig");
        try {
            Files.writeString(kubeconfig, "apiVersion: v1\nkind: Config\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new Kubectl(plane.binaries().binary("kubectl"), List.of("--kubeconfig", kubeconfig.toString(), "--server", server), home);
    }

    /** Runs {@code kubectl <target> args…}. */
    public Result run(String... args) {
        List<String> command = new ArrayList<>(List.of(binary.toString()));
        command.addAll(target);
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        if (home != null) {
            builder.environment().put("HOME", home.toString());
        }
        try {
            Process process = builder.start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("kubectl did not finish within " + TIMEOUT_SECONDS + " s: " + command);
            }
            return new Result(process.exitValue(), output);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + command, e);
        }
    }

    /** Runs {@code kubectl <target> args…} and returns its output; fails the test, with the output, unless it exited 0. */
    public String ok(String... args) {
        Result result = run(args);
        if (result.exitCode() != 0) {
            throw new AssertionError("kubectl " + String.join(" ", args) + " exited " + result.exitCode() + ":\n" + result.output());
        }
        return result.output();
    }
}
