package io.devhealth.sink;

import static io.devhealth.sink.PodStatusFixtures.device;
import static io.devhealth.sink.PodStatusFixtures.status;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.testkit.kube.PodFixtures;
import io.devhealth.testkit.time.MutableClock;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Instant;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The exact JSON Patch the sink sends in each mode: nothing but our field and our condition, guarded. */
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

    private String json(SinkConfig.Mode mode, Pod pod) {
        return client.getKubernetesSerialization().asJson(new PodStatusWriter(client, mode, clock).patch(pod, unhealthy));
    }

    private static String guard(Pod pod) {
        return "{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"" + pod.getMetadata().getResourceVersion() + "\"}";
    }

    private static final String FIELD = "{\"op\":\"test\",\"path\":\"/status/containerStatuses/0/name\",\"value\":\"main\"},"
            + "{\"op\":\"add\",\"path\":\"/status/containerStatuses/0/allocatedResourcesStatus\",\"value\":[{\"name\":\"claim:gpu/gpu\","
            + "\"resources\":[{\"health\":\"Unhealthy\",\"message\":\"XID 79\",\"resourceID\":\"gpu.example.com/gpu=gpu-0\"}]}]}";

    private static final String CONDITION = "{\"op\":\"add\",\"path\":\"/status/conditions/-\",\"value\":{\"type\":\"devhealth.io/DevicesHealthy\","
            + "\"status\":\"False\",\"reason\":\"DeviceUnhealthy\",\"message\":\"gpu.example.com/node-a/gpu-0 Unhealthy: XID 79\","
            + "\"lastTransitionTime\":\"2026-11-29T10:00:00Z\"}}";

    @Test
    void shouldSendFieldAndConditionInModeAll() {
        assertThat(json(SinkConfig.Mode.ALL, live)).isEqualTo("[" + guard(live) + "," + FIELD + "," + CONDITION + "]");
    }

    @Test
    void shouldSendOnlyTheConditionForALivePodInModeTerminated() {
        assertThat(json(SinkConfig.Mode.TERMINATED, live)).isEqualTo("[" + guard(live) + "," + CONDITION + "]");
    }

    @Test
    void shouldSendFieldAndConditionForATerminatedPodInModeTerminated() {
        Pod terminated = PodFixtures.markTerminated(client, "ml", "train-0", 1, Instant.parse("2026-11-29T10:05:00Z"));

        assertThat(json(SinkConfig.Mode.TERMINATED, terminated)).isEqualTo("[" + guard(terminated) + "," + FIELD + "," + CONDITION + "]");
    }

    @Test
    void shouldSendOnlyTheConditionInModeConditionsOnly() {
        Pod terminated = PodFixtures.markTerminated(client, "ml", "train-0", 1, Instant.parse("2026-11-29T10:05:00Z"));

        assertThat(json(SinkConfig.Mode.CONDITIONS_ONLY, terminated)).isEqualTo("[" + guard(terminated) + "," + CONDITION + "]");
    }
}
