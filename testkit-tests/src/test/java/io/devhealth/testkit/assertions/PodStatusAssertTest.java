package io.devhealth.testkit.assertions;

import static io.devhealth.testkit.assertions.PodStatusAssert.assertThatPod;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import org.junit.jupiter.api.Test;

class PodStatusAssertTest {

    private static final String ENTRY = "claim:gpu/gpu";
    private static final String GPU0 = "gpu.example.com/node-a/gpu-0";

    private final Pod pod = new PodBuilder()
            .withNewMetadata().withNamespace("ml").withName("trainer-0").endMetadata()
            .withNewStatus()
                .withPhase("Running")
                .addNewCondition().withType("Ready").withStatus("True").endCondition()
                .addNewContainerStatus()
                    .withName("main")
                    .withReady(true)
                    .withRestartCount(2)
                    .withNewState().withNewRunning().endRunning().endState()
                    .addNewAllocatedResourcesStatus()
                        .withName(ENTRY)
                        .addNewResource().withResourceID(GPU0).withHealth("Unhealthy").withMessage("XID 79")
                        .endResource()
                    .endAllocatedResourcesStatus()
                .endContainerStatus()
                .addNewContainerStatus().withName("sidecar").withReady(false).endContainerStatus()
            .endStatus()
            .build();

    @Test
    void shouldPassOnMatchingStatus() {
        assertThatPod(pod)
                .hasPhase("Running")
                .hasCondition("Ready", "True")
                .doesNotHaveCondition("DeviceHealthy")
                .container("main")
                    .isReady()
                    .isRunning()
                    .hasRestartCount(2)
                    .hasResourceHealth(ENTRY, GPU0, "Unhealthy")
                    .hasResourceHealth(ENTRY, GPU0, "Unhealthy", "XID 79")
                    .hasResourceCount(ENTRY, 1)
                .and()
                .container("sidecar")
                    .hasNoResourceHealth(ENTRY);
    }

    @Test
    void shouldExplainAWrongHealth() {
        assertThatThrownBy(() -> assertThatPod(pod).container("main").hasResourceHealth(ENTRY, GPU0, "Healthy"))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("container ml/trainer-0/main")
                .hasMessageContaining("<Healthy> but was <Unhealthy>")
                .hasMessageContaining(GPU0 + "=Unhealthy(XID 79)");
    }

    @Test
    void shouldExplainAMissingEntryResourceOrContainer() {
        assertThatThrownBy(() -> assertThatPod(pod).container("main").hasResourceHealth("claim:other", GPU0, "Healthy"))
                .isInstanceOf(AssertionError.class).hasMessageContaining("entry <claim:other>");
        assertThatThrownBy(() -> assertThatPod(pod).container("main").hasResourceHealth(ENTRY, "gpu-9", "Healthy"))
                .isInstanceOf(AssertionError.class).hasMessageContaining("resource <gpu-9>");
        assertThatThrownBy(() -> assertThatPod(pod).container("missing"))
                .isInstanceOf(AssertionError.class).hasMessageContaining("[main, sidecar]");
    }

    @Test
    void shouldExplainAWrongCondition() {
        assertThatThrownBy(() -> assertThatPod(pod).hasCondition("Ready", "False"))
                .isInstanceOf(AssertionError.class).hasMessageContaining("<False> but was <True>");
        assertThatThrownBy(() -> assertThatPod(pod).hasCondition("DeviceHealthy", "True"))
                .isInstanceOf(AssertionError.class).hasMessageContaining("[Ready=True]");
    }
}
