package io.devhealth.sink.condition;

import static io.devhealth.sink.PodStatusFixtures.device;
import static io.devhealth.sink.PodStatusFixtures.status;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.simulators.kube.PodFixtures;
import io.devhealth.testkit.time.MutableClock;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Instant;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The exact JSON Patch the sink sends to a pod: nothing but our condition, guarded; never a kubelet-owned field. */
@EnableKubernetesMockClient(crud = true)
class PodStatusPatchJsonTest {

    KubernetesMockServer server;
    KubernetesClient client;

    private final MutableClock clock = MutableClock.at("2026-11-29T10:00:00Z");
    private final PodDeviceStatus unhealthy = status("ml", "train-0", "main", "train-0-gpu-x1", HealthStatus.UNHEALTHY,
            device("gpu-0", HealthStatus.UNHEALTHY, "XID 79"));
    private Pod live;

    @BeforeEach
    void createPod() {
        live = PodFixtures.createRunning(client, PodFixtures.podWithClaim("ml", "train-0", "node-a", "main", "gpu", "train-0-gpu-x1", "gpu"));
    }

    private String json(Pod pod) {
        return client.getKubernetesSerialization().asJson(PodStatusWriter.builder(client, clock).build().patch(pod, unhealthy));
    }

    private static String guard(Pod pod) {
        return "{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"" + pod.getMetadata().getResourceVersion() + "\"}";
    }

    private static final String CONDITION = "{\"op\":\"add\",\"path\":\"/status/conditions/-\",\"value\":{\"type\":\"devhealth.io/DevicesHealthy\","
            + "\"status\":\"False\",\"reason\":\"DeviceUnhealthy\",\"message\":\"gpu.example.com/node-a/gpu-0 Unhealthy since "
            + "2026-11-29T10:00:00Z: XID 79\",\"lastTransitionTime\":\"2026-11-29T10:00:00Z\"}}";

    @Test
    void shouldSendOnlyOurConditionForALivePod() {
        assertThat(json(live)).isEqualTo("[" + guard(live) + "," + CONDITION + "]");
    }

    @Test
    void shouldSendOnlyOurConditionForATerminatedPodAndNeverAContainerStatus() {
        Pod terminated = PodFixtures.markTerminated(client, "ml", "train-0", 1, Instant.parse("2026-11-29T10:05:00Z"));

        assertThat(json(terminated)).isEqualTo("[" + guard(terminated) + "," + CONDITION + "]").doesNotContain("containerStatuses");
    }
}
