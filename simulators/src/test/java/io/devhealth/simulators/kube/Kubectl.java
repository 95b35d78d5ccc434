package io.devhealth.simulators.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The machine's real kubectl against an in-process API, for the ITs that check kubectl can use it. */
final class Kubectl {

    private static final Path BINARY = Path.of("/usr/bin/kubectl");

    private final String server;
    private final Path home;

    /** @param home an empty directory: kubectl's HOME and kubeconfig live there */
    private Kubectl(String server, Path home) {
        this.server = server;
        this.home = home;
    }

    /** Skips the calling test when kubectl is not installed. */
    static Kubectl against(String server, Path home) {
        assumeThat(Files.isExecutable(BINARY)).as("kubectl installed").isTrue();
        return new Kubectl(server, home);
    }

    /** Runs {@code kubectl --server <server> args…}, asserts it succeeded, and returns its output. */
    String run(String... args) throws IOException, InterruptedException {
        // An empty kubeconfig, so that whatever the machine has configured cannot interfere.
        Path kubeconfig = home.resolve("kubeconfig");
        Files.writeString(kubeconfig, "apiVersion: v1\nkind: Config\n");
        List<String> command = new ArrayList<>(List.of(BINARY.toString(), "--server", server));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("KUBECONFIG", kubeconfig.toString());
        builder.environment().put("HOME", home.toString());
        Process process = builder.start();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("kubectl timed out: " + command);
        }
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.exitValue()).as("kubectl %s exit code; output:%n%s", command, output).isZero();
        return output;
    }
}
