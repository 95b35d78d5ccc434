package io.devhealth.collector.nvml;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.collector.nvml.HealthPolicy.Action;
import io.devhealth.collector.nvml.jna.NvmlEventType;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HealthPolicyTest {

    @Test
    void shouldFollowTheXidCatalogueByDefault() {
        HealthPolicy policy = HealthPolicy.defaults();
        assertThat(policy.xidRule(79).action()).isEqualTo(Action.UNHEALTHY);
        assertThat(policy.xidRule(79).untilReset()).isTrue();
        assertThat(policy.xidRule(79).description()).isEqualTo("GPU has fallen off the bus");
        assertThat(policy.xidRule(48).untilReset()).isTrue();
        assertThat(policy.xidRule(13).action()).isEqualTo(Action.HEALTHY_WITH_MESSAGE);
        assertThat(policy.xidRule(31).action()).isEqualTo(Action.HEALTHY_WITH_MESSAGE);
        assertThat(policy.xidRule(54).untilReset()).isFalse();
        assertThat(policy.xidRule(12345)).isEqualTo(policy.xids().get("default"));
        assertThat(policy.about().toString()).contains("NVIDIA's XID catalogue");
    }

    @Test
    void shouldWantOnlyEventTypesItActsOn() {
        long mask = HealthPolicy.defaults().wantedEventMask();
        assertThat(NvmlEventType.inMask(mask)).contains(NvmlEventType.XID_CRITICAL_ERROR, NvmlEventType.DOUBLE_BIT_ECC,
                NvmlEventType.FATAL_POISON, NvmlEventType.GPU_RECOVERY_ACTION).doesNotContain(NvmlEventType.SINGLE_BIT_ECC);
    }

    @Test
    void shouldMergeUserFileOverDefaults(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("policy.json");
        Files.writeString(file, """
                {"xids": {"13": {"action": "IGNORE"}, "109": {"action": "HEALTHY_WITH_MESSAGE", "description": "context switch timeout"}},
                 "readings": {"temperature": {"action": "UNHEALTHY", "marginCelsius": 5, "description": "hot"}}}
                """);
        HealthPolicy policy = HealthPolicy.load(file);
        assertThat(policy.xidRule(13).action()).isEqualTo(Action.IGNORE);
        assertThat(policy.xidRule(109).action()).isEqualTo(Action.HEALTHY_WITH_MESSAGE);
        assertThat(policy.xidRule(109).untilReset()).isFalse();
        assertThat(policy.xidRule(79).untilReset()).isTrue();
        assertThat(policy.readings().temperature().marginCelsius()).isEqualTo(5);
        assertThat(policy.readings().remappedRowsFailure().action()).isEqualTo(Action.UNHEALTHY);
    }

    @Test
    void shouldRejectBadPolicyFilesNamingTheFile(@TempDir Path dir) throws Exception {
        Path badAction = dir.resolve("bad-action.json");
        Files.writeString(badAction, "{\"xids\": {\"13\": {\"action\": \"EXPLODE\"}}}");
        assertThatThrownBy(() -> HealthPolicy.load(badAction)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(badAction.toString()).hasMessageContaining("EXPLODE");
        Path badKey = dir.resolve("bad-key.json");
        Files.writeString(badKey, "{\"xids\": {\"thirteen\": {\"action\": \"IGNORE\"}}}");
        assertThatThrownBy(() -> HealthPolicy.load(badKey)).hasMessageContaining("thirteen");
        Path unknownField = dir.resolve("unknown.json");
        Files.writeString(unknownField, "{\"xidz\": {}}");
        assertThatThrownBy(() -> HealthPolicy.load(unknownField)).hasMessageContaining("xidz");
        assertThatThrownBy(() -> HealthPolicy.load(dir.resolve("missing.json"))).hasMessageContaining("missing.json");
    }
}
