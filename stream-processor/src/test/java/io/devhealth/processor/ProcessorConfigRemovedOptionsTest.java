package io.devhealth.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

/** A setting the processor no longer has stops it at start, naming the setting, instead of being ignored. */
class ProcessorConfigRemovedOptionsTest {

    private static Map<String, String> environment() {
        return new HashMap<>(Map.of("DEVHEALTH_KAFKA_BOOTSTRAP_SERVERS", "k:9092", "DEVHEALTH_SCHEMA_REGISTRY_URL", "mem://p"));
    }

    @Test
    void shouldFailToStartWithTheRemovedLegacyInputsVariableNamingIt() {
        Map<String, String> env = environment();
        env.put("DEVHEALTH_INPUTS_LEGACY_ENABLED", "true");

        assertThatThrownBy(() -> ProcessorConfig.fromEnvironment(env, Map.of())).isInstanceOf(ConfigException.class)
                .hasMessageContaining("inputs.legacy.enabled").hasMessageContaining("DEVHEALTH_INPUTS_LEGACY_ENABLED")
                .hasMessageContaining("no longer a setting").hasMessageContaining("node-events")
                .hasMessageContaining("Remove the setting");
    }

    @Test
    void shouldRejectTheRemovedLegacyInputsKeyWhateverItsValue() {
        for (String value : new String[] {"true", "false"}) {
            Map<String, Object> values = new HashMap<>(Map.of(ProcessorConfig.BOOTSTRAP_SERVERS, "k:9092",
                    ProcessorConfig.SCHEMA_REGISTRY_URL, "mem://p", "inputs.legacy.enabled", value));

            assertThatThrownBy(() -> new ProcessorConfig(values)).as(value).isInstanceOf(ConfigException.class)
                    .hasMessageContaining("inputs.legacy.enabled").hasMessageContaining("no longer a setting");
            assertThatThrownBy(() -> ProcessorConfig.fromEnvironment(environment(), Map.of("inputs.legacy.enabled", value)))
                    .as("--set inputs.legacy.enabled=%s", value).isInstanceOf(ConfigException.class)
                    .hasMessageContaining("inputs.legacy.enabled");
        }
        assertThat(ProcessorConfig.describe(ProcessorConfig.DEFINITION)).doesNotContain("inputs.legacy", "INPUTS_LEGACY");
    }

    @Test
    void shouldStartWithoutTheRemovedSetting() {
        assertThat(ProcessorConfig.fromEnvironment(environment(), Map.of()).topics().nodeEvents()).isEqualTo("devhealth.node-events");
    }
}
