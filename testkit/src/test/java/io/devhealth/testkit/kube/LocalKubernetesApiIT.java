package io.devhealth.testkit.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.fabric8.kubernetes.api.model.Pod;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalKubernetesApiIT {

    private static LocalKubernetesApi api;

    @TempDir
    Path tmp;

    @BeforeAll
    static void startApi() {
        api = LocalKubernetesApi.start();
    }

    @AfterAll
    static void stopApi() {
        api.close();
        api.close();
    }

    @Test
    void shouldServeTheFabric8Client() {
        Pod pod = PodFixtures.podWithClaim("ml", "fabric8-pod", "node-a", "main", "gpu", "fabric8-pod-gpu", "gpu");

        api.client().pods().inNamespace("ml").resource(pod).create();

        Pod stored = api.client().pods().inNamespace("ml").withName("fabric8-pod").get();
        assertThat(stored.getSpec().getResourceClaims()).singleElement()
                .satisfies(c -> assertThat(c.getResourceClaimName()).isEqualTo("fabric8-pod-gpu"));
        assertThat(api.url()).isEqualTo("http://127.0.0.1:" + api.port());
        assertThat(api.kubectlCommand("get pods -A")).isEqualTo("kubectl --server " + api.url() + " get pods -A");
    }

    @Test
    void shouldServeTheRealKubectl() throws Exception {
        Path kubectl = Path.of("/usr/bin/kubectl");
        assumeThat(Files.isExecutable(kubectl)).as("kubectl installed").isTrue();
        PodFixtures.createRunning(api.client(),
                PodFixtures.podWithClaim("ml", "kubectl-pod", "node-a", "main", "gpu", "kubectl-pod-gpu", "gpu"));

        String json = kubectl(kubectl, "get", "pods", "-A", "-o", "json");
        String phase = kubectl(kubectl, "get", "pod", "-n", "ml", "kubectl-pod", "-o", "jsonpath={.status.phase}");

        assertThat(json).contains("\"name\": \"kubectl-pod\"").contains("\"resourceClaimName\": \"kubectl-pod-gpu\"");
        assertThat(phase).isEqualTo("Running");
        // No server-side tables in the mock: kubectl falls back to NAME and AGE columns.
        assertThat(kubectl(kubectl, "get", "pods", "-n", "ml")).contains("NAME").contains("kubectl-pod");
        assertThat(kubectl(kubectl, "get", "resourceclaims", "-A", "-o", "json")).contains("\"items\"");
    }

    private String kubectl(Path kubectl, String... args) throws IOException, InterruptedException {
        // An empty kubeconfig, so that whatever the machine has configured cannot interfere.
        Path kubeconfig = tmp.resolve("kubeconfig");
        Files.writeString(kubeconfig, "apiVersion: v1\nkind: Config\n");
        List<String> command = new ArrayList<>(List.of(kubectl.toString(), "--server", api.url()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("KUBECONFIG", kubeconfig.toString());
        builder.environment().put("HOME", tmp.toString());
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
