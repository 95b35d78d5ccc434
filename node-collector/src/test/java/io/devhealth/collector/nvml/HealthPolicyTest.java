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
        assertThat(policy.xidRule(79).description()).isEqualTo("GPU has fallen off the bus [RESTART_BM: node reboot required]");
        assertThat(policy.xidRule(79).catalogAction()).isEqualTo("RESTART_BM");
        assertThat(policy.xidRule(48).untilReset()).isTrue();
        assertThat(policy.xidRule(13).action()).isEqualTo(Action.HEALTHY_WITH_MESSAGE);
        assertThat(policy.xidRule(31).action()).isEqualTo(Action.HEALTHY_WITH_MESSAGE);
        // XIDs the policy used to leave to the default now follow the catalogue: a copy engine exception is the application's.
        assertThat(policy.xidRule(39).action()).isEqualTo(Action.HEALTHY_WITH_MESSAGE);
        assertThat(policy.xidRule(54).untilReset()).isTrue();
        assertThat(policy.xidRule(12345)).isEqualTo(policy.xids().get("default"));
        assertThat(policy.about().toString()).contains("NVIDIA's XID catalogue");
    }

    @Test
    void shouldNotMakeNvlink5XidsStickyWithoutTheirSeverity() {
        HealthPolicy policy = HealthPolicy.defaults();
        for (long xid = 144; xid <= 150; xid++) {
            assertThat(policy.xidRule(xid).untilReset()).as("XID %d", xid).isFalse();
            assertThat(policy.xidRule(xid).action()).as("XID %d", xid).isNotEqualTo(Action.UNHEALTHY);
        }
        // Where NVML does say a reset is needed, the recovery-action reading is Unhealthy.
        assertThat(policy.readings().recoveryAction().get(HealthPolicy.RecoveryAction.DRAIN_AND_RESET).action()).isEqualTo(Action.UNHEALTHY);
    }

    @Test
    void shouldLetAnOperatorOverrideOneXidKeepingTheCatalogueDescription(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("policy.json");
        Files.writeString(file, "{\"xids\": {\"13\": {\"action\": \"UNHEALTHY\", \"untilReset\": true}}}");
        HealthPolicy policy = HealthPolicy.load(file);
        assertThat(policy.xidRule(13).action()).isEqualTo(Action.UNHEALTHY);
        assertThat(policy.xidRule(13).untilReset()).isTrue();
        assertThat(policy.xidRule(13).description()).isEqualTo("Graphics Engine Exception");
        assertThat(policy.xidRule(31).action()).isEqualTo(Action.HEALTHY_WITH_MESSAGE);
    }

    @Test
    void shouldLetAnOperatorOverrideAWholeCatalogueAction(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("policy.json");
        Files.writeString(file, """
                {"xidActions": {"WORKFLOW_NVLINK5_ERR": {"action": "UNHEALTHY", "untilReset": true, "description": "reset the GPU"}}}
                """);
        HealthPolicy policy = HealthPolicy.load(file);
        assertThat(policy.xidRule(147).untilReset()).isTrue();
        assertThat(policy.xidRule(147).description()).isEqualTo("NVLINK: TREX Error [WORKFLOW_NVLINK5_ERR: reset the GPU]");
        assertThat(policy.xidRule(13).action()).isEqualTo(Action.HEALTHY_WITH_MESSAGE);
    }

    @Test
    void shouldRejectARuleForAnActionTheCatalogueDoesNotUse(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("policy.json");
        Files.writeString(file, "{\"xidActions\": {\"RESTART_APPLICATION\": {\"action\": \"IGNORE\"}}}");
        assertThatThrownBy(() -> HealthPolicy.load(file)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(file.toString()).hasMessageContaining("\"RESTART_APPLICATION\" is no action of the XID catalogue");
    }

    @Test
    void shouldRefuseACatalogueActionWithoutARule() {
        XidCatalog newer = XidCatalog.parse(java.util.List.of("13\tM\td\tRESTART_APP", "200\tNEW\tnew thing\tRESTART_FABRIC"));
        assertThatThrownBy(() -> HealthPolicy.checkXidActions(HealthPolicy.defaults().xidActions(), newer))
                .hasMessageContaining("no rule for the catalogue action \"RESTART_FABRIC\" (XIDs 200)");
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
