package io.devhealth.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.sink.taints.TaintRuleSettings;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

class SinkConfigTaintRulesTest {

    private static Map<String, String> env(String... pairs) {
        Map<String, String> env = new HashMap<>(Map.of("DEVHEALTH_KAFKA_BOOTSTRAP_SERVERS", "kafka:9092",
                "DEVHEALTH_SCHEMA_REGISTRY_URL", "mem://test"));
        for (int i = 0; i < pairs.length; i += 2) {
            env.put(pairs[i], pairs[i + 1]);
        }
        return env;
    }

    @Test
    void shouldBeOffByDefaultWithTheDocumentedLimits() {
        TaintRuleSettings settings = SinkConfig.fromEnvironment(env(), Map.of()).taintRules();

        assertThat(settings).isEqualTo(new TaintRuleSettings(false, false, "devhealth-sink-taints", Duration.ofMinutes(10), 2, 0.5,
                Duration.ofMinutes(5)));
    }

    @Test
    void shouldReadEverySettingFromItsEnvironmentVariable() {
        TaintRuleSettings settings = SinkConfig.fromEnvironment(env("DEVHEALTH_TAINT_RULES_ENABLED", "true",
                "DEVHEALTH_TAINT_RULES_DRY_RUN", "true", "DEVHEALTH_TAINT_RULES_GROUP_ID", "g",
                "DEVHEALTH_TAINT_RULES_MIN_HOLD_MS", "1000", "DEVHEALTH_TAINT_RULES_MAX_PER_NODE", "4",
                "DEVHEALTH_TAINT_RULES_BREAKER_NODE_FRACTION", "0.25", "DEVHEALTH_TAINT_RULES_BREAKER_WINDOW_MS", "60000"), Map.of())
                .taintRules();

        assertThat(settings).isEqualTo(new TaintRuleSettings(true, true, "g", Duration.ofSeconds(1), 4, 0.25, Duration.ofMinutes(1)));
    }

    @Test
    void shouldRefuseAnInvalidValueNamingTheSetting() {
        assertThatThrownBy(() -> SinkConfig.fromEnvironment(env("DEVHEALTH_TAINT_RULES_ENABLED", "yes"), Map.of()))
                .isInstanceOf(ConfigException.class).hasMessageContaining(SinkConfig.TAINT_RULES_ENABLED);
        assertThatThrownBy(() -> SinkConfig.fromEnvironment(env("DEVHEALTH_TAINT_RULES_BREAKER_NODE_FRACTION", "50"), Map.of()))
                .isInstanceOf(ConfigException.class).hasMessageContaining(SinkConfig.TAINT_RULES_BREAKER_NODE_FRACTION);
        assertThatThrownBy(() -> SinkConfig.fromEnvironment(env("DEVHEALTH_TAINT_RULES_MAX_PER_NODE", "0"), Map.of()))
                .isInstanceOf(ConfigException.class).hasMessageContaining(SinkConfig.TAINT_RULES_MAX_PER_NODE);
        assertThatThrownBy(() -> SinkConfig.fromEnvironment(env("DEVHEALTH_TAINT_RULES_MIN_HOLD_MS", "ten minutes"), Map.of()))
                .isInstanceOf(ConfigException.class).hasMessageContaining(SinkConfig.TAINT_RULES_MIN_HOLD_MS);
    }

    @Test
    void shouldStartANewRetryElsewhereGroupAtTheEndOfHealthTransitionsAndTheStatusGroupAtTheBeginning() {
        SinkConfig config = SinkConfig.fromEnvironment(env("DEVHEALTH_TAINT_RULES_ENABLED", "true"), Map.of());

        assertThat(SinkApp.consumerProperties(config, config.taintRules().groupId(), "latest"))
                .containsEntry("group.id", "devhealth-sink-taints").containsEntry("auto.offset.reset", "latest")
                .containsEntry("enable.auto.commit", false).containsEntry("isolation.level", "read_committed");
        assertThat(SinkApp.consumerProperties(config, config.groupId(), "earliest")).containsEntry("auto.offset.reset", "earliest");
    }
}
