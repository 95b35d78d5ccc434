package io.devhealth.collector.taint;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.collector.inventory.ResourceSliceMapper.SliceDevice;
import io.devhealth.schema.OwnTaintRules;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceTaintRule;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceTaintRuleBuilder;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DeviceTaintSourceTest {

    private static final SliceDevice GPU_0 = new SliceDevice("gpu.example.com", "node-a", new DeviceBuilder().withName("gpu-0").build());

    private static DeviceTaintRule rule(String name, Map<String, String> labels) {
        return new DeviceTaintRuleBuilder()
                .withNewMetadata().withName(name).withLabels(labels).endMetadata()
                .withNewSpec()
                        .withNewDeviceSelector().withDriver("gpu.example.com").withPool("node-a").withDevice("gpu-0").endDeviceSelector()
                        .withNewTaint().withKey("example.com/broken").withEffect("NoSchedule").endTaint()
                .endSpec().build();
    }

    @Test
    void shouldReadAnAdministratorsRuleButNotTheRulesDevhealthsSinkCreated() {
        DeviceTaintRule administrators = rule("admin", Map.of());
        DeviceTaintRule sinks = rule("devhealth-0123", Map.of(OwnTaintRules.MANAGED_BY_LABEL, OwnTaintRules.MANAGED_BY));

        assertThat(DeviceTaintSource.taintsOf(GPU_0, List.of(administrators, sinks))).singleElement()
                .satisfies(taint -> assertThat(taint.key()).isEqualTo("example.com/broken"));
        assertThat(DeviceTaintSource.taintsOf(GPU_0, List.of(sinks))).isEmpty();
    }
}
