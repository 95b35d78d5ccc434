package io.devhealth.testkit.kube;

import static io.devhealth.testkit.assertions.PodStatusAssert.assertThatPod;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.simulators.kube.FleetKubernetesApi;
import io.devhealth.simulators.kube.PodFixtures;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ResourceStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class PodFixturesIT {

    private static FleetKubernetesApi api;
    private static KubernetesClient client;

    @BeforeAll
    static void startApi() {
        api = FleetKubernetesApi.start();
        client = api.client();
    }

    @AfterAll
    static void stopApi() {
        api.close();
    }

    @Test
    void shouldBuildAPodThatUsesAClaim() {
        Pod pod = PodFixtures.podWithClaim("ml", "trainer-0", "node-a", "main", "gpu", "trainer-0-gpu-x7k2p", "gpus");

        assertThat(pod.getSpec().getNodeName()).isEqualTo("node-a");
        assertThat(pod.getSpec().getResourceClaims()).singleElement().satisfies(c -> {
            assertThat(c.getName()).isEqualTo("gpu");
            assertThat(c.getResourceClaimName()).isEqualTo("trainer-0-gpu-x7k2p");
        });
        assertThat(pod.getSpec().getContainers()).singleElement().satisfies(c -> {
            assertThat(c.getName()).isEqualTo("main");
            assertThat(c.getResources().getClaims()).singleElement().satisfies(claim -> {
                assertThat(claim.getName()).isEqualTo("gpu");
                assertThat(claim.getRequest()).isEqualTo("gpus");
            });
        });
        assertThat(pod.getStatus()).isNull();
    }

    @Test
    void shouldCreateARunningPodThroughTheStatusSubresource() {
        Pod pod = new PodBuilder(PodFixtures.podWithClaim("ml", "running", "node-a", "main", "gpu", "running-gpu", null))
                .withNewStatus().withPhase("Pending").endStatus()
                .build();

        Pod running = PodFixtures.createRunning(client, pod);

        Pod stored = client.pods().inNamespace("ml").withName("running").get();
        assertThat(stored.getMetadata().getResourceVersion()).isEqualTo(running.getMetadata().getResourceVersion());
        assertThat(stored.getSpec().getContainers().get(0).getResources().getClaims().get(0).getRequest()).isNull();
        assertThatPod(stored)
                .hasPhase("Running")
                .hasCondition("Ready", "True")
                .hasCondition("PodScheduled", "True")
                .container("main").isReady().isRunning().hasRestartCount(0);
    }

    @Test
    void shouldMarkAPodTerminatedAndKeepResourceHealth() {
        PodFixtures.createRunning(client,
                PodFixtures.podWithClaim("ml", "finished", "node-a", "main", "gpu", "finished-gpu", "gpu"));
        client.pods().inNamespace("ml").withName("finished").editStatus(p -> {
            ContainerStatus main = p.getStatus().getContainerStatuses().get(0);
            main.setAllocatedResourcesStatus(java.util.List.of(new ResourceStatusBuilder()
                    .withName("claim:gpu/gpu")
                    .addNewResource().withResourceID("gpu.example.com/node-a/gpu-0").withHealth("Unhealthy")
                    .withMessage("XID 79").endResource()
                    .build()));
            return p;
        });

        Pod terminated = PodFixtures.markTerminated(client, "ml", "finished", 137, Instant.parse("2026-11-29T10:00:00Z"));

        assertThatPod(terminated)
                .hasPhase("Failed")
                .hasCondition("Ready", "False", "PodFailed")
                .container("main")
                    .isTerminatedWithExitCode(137)
                    .hasResourceHealth("claim:gpu/gpu", "gpu.example.com/node-a/gpu-0", "Unhealthy", "XID 79");
        assertThat(terminated.getStatus().getContainerStatuses().get(0).getState().getTerminated().getFinishedAt())
                .isEqualTo("2026-11-29T10:00:00Z");
        assertThatPod(PodFixtures.markTerminated(client, "ml", "finished", 0, Instant.now())).hasPhase("Succeeded");
    }
}
