package io.devhealth.simulators.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import java.nio.file.Path;
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
        Kubectl kubectl = Kubectl.against(api.url(), tmp);
        PodFixtures.createRunning(api.client(),
                PodFixtures.podWithClaim("ml", "kubectl-pod", "node-a", "main", "gpu", "kubectl-pod-gpu", "gpu"));

        String json = kubectl.run("get", "pods", "-A", "-o", "json");
        String phase = kubectl.run("get", "pod", "-n", "ml", "kubectl-pod", "-o", "jsonpath={.status.phase}");

        assertThat(json).contains("\"name\": \"kubectl-pod\"").contains("\"resourceClaimName\": \"kubectl-pod-gpu\"");
        assertThat(phase).isEqualTo("Running");
        // No server-side tables in the mock: kubectl falls back to NAME and AGE columns.
        assertThat(kubectl.run("get", "pods", "-n", "ml")).contains("NAME").contains("kubectl-pod");
        assertThat(kubectl.run("get", "resourceclaims", "-A", "-o", "json")).contains("\"items\"");
    }
}
