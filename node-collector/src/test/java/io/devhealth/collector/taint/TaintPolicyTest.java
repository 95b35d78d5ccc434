package io.devhealth.collector.taint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.collector.taint.TaintPolicy.Taint;
import io.devhealth.collector.taint.TaintPolicy.Verdict;
import io.devhealth.schema.avro.HealthStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TaintPolicyTest {

    private final TaintPolicy policy = TaintPolicy.defaults();

    @Test
    void shouldCallADeviceWithoutTaintsHealthySoThatARemovedTaintIsARecovery() {
        assertThat(policy.judge(List.of())).isEqualTo(new Verdict(HealthStatus.HEALTHY, null));
    }

    @ParameterizedTest(name = "{0}={1}:{2} -> {3}")
    @CsvSource(delimiter = '|', textBlock = """
            gpu.nvidia.com/xid         | 79 | NoSchedule | UNHEALTHY | XID 79 reported by the driver (gpu.nvidia.com/xid, NoSchedule)
            gpu.nvidia.com/xid         | 79 | NoExecute  | UNHEALTHY | XID 79 reported by the driver (gpu.nvidia.com/xid, NoExecute)
            gpu.nvidia.com/xid         | 43 | None       | HEALTHY   | XID 43 reported by the driver, not fatal (gpu.nvidia.com/xid, None)
            gpu.nvidia.com/gpu-lost    |    | NoSchedule | UNHEALTHY | GPU lost (gpu.nvidia.com/gpu-lost, NoSchedule)
            gpu.nvidia.com/unmonitored |    | None       | UNKNOWN   | the driver cannot monitor this device's health (gpu.nvidia.com/unmonitored)
            example.com/maintenance    | on | NoExecute  | UNHEALTHY | tainted example.com/maintenance=on:NoExecute
            example.com/flaky          | x  | NoSchedule | UNHEALTHY | tainted example.com/flaky=x:NoSchedule
            example.com/note           | y  | None       | HEALTHY   | tainted example.com/note=y:None (informational)
            example.com/future         | z  | Evict      | UNKNOWN   | tainted example.com/future=z:Evict (effect unknown to this policy)
            """)
    void shouldJudgeNvidiasKeysAndEveryEffectByTheShippedRules(String key, String value, String effect, HealthStatus health,
                                                               String message) {
        assertThat(policy.judge(List.of(new Taint(key, value, effect)))).isEqualTo(new Verdict(health, message));
    }

    @Test
    void shouldLetTheWorstTaintWinAndNameEveryTaintOfThatHealth() {
        Verdict verdict = policy.judge(List.of(
                new Taint("gpu.nvidia.com/xid", "43", "None"),
                new Taint("gpu.nvidia.com/unmonitored", "", "None"),
                new Taint("gpu.nvidia.com/xid", "79", "NoSchedule"),
                new Taint("admin.example.com/drain", "", "NoExecute")));

        assertThat(verdict.health()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(verdict.message()).isEqualTo("tainted admin.example.com/drain=:NoExecute; "
                + "XID 79 reported by the driver (gpu.nvidia.com/xid, NoSchedule)");
    }

    @Test
    void shouldTryAnOperatorsRulesBeforeTheShippedOnes(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("taints.json");
        Files.writeString(file, """
                {"rules": [
                  {"key": "gpu.nvidia.com/xid", "value": "31", "health": "HEALTHY", "message": "XID {value}: the application's fault"},
                  {"key": "example.com/*", "health": "UNKNOWN", "message": "{key} under investigation"}
                ]}""");
        TaintPolicy overridden = TaintPolicy.withOverrides(Optional.of(file));

        assertThat(overridden.judge(List.of(new Taint("gpu.nvidia.com/xid", "31", "NoSchedule"))))
                .isEqualTo(new Verdict(HealthStatus.HEALTHY, "XID 31: the application's fault"));
        assertThat(overridden.judge(List.of(new Taint("example.com/burn-in", "", "NoSchedule"))))
                .isEqualTo(new Verdict(HealthStatus.UNKNOWN, "example.com/burn-in under investigation"));
        assertThat(overridden.judge(List.of(new Taint("gpu.nvidia.com/xid", "79", "NoSchedule"))).health())
                .as("the shipped rules still apply where the operator's do not").isEqualTo(HealthStatus.UNHEALTHY);
    }

    @Test
    void shouldRefuseAPolicyFileWithARuleWithoutHealthNamingTheFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("broken.json");
        Files.writeString(file, "{\"rules\": [{\"key\": \"gpu.nvidia.com/xid\"}]}");

        assertThatThrownBy(() -> TaintPolicy.withOverrides(Optional.of(file)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(file.toString())
                .hasMessageContaining("every rule needs a health");
    }
}
