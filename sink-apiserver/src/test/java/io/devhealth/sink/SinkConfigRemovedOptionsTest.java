package io.devhealth.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

class SinkConfigRemovedOptionsTest {

    private static final Map<String, String> REQUIRED = Map.of(
            "DEVHEALTH_KAFKA_BOOTSTRAP_SERVERS", "kafka:9092",
            "DEVHEALTH_SCHEMA_REGISTRY_URL", "mem://test");

    private static Map<String, String> with(String name, String value) {
        Map<String, String> env = new java.util.HashMap<>(REQUIRED);
        env.put(name, value);
        return env;
    }

    @Test
    void shouldRefuseToStartWithTheRemovedModeNamingItsEnvironmentVariable() {
        assertThatThrownBy(() -> SinkConfig.fromEnvironment(with("DEVHEALTH_MODE", "all-xyz"), Map.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("mode (environment variable DEVHEALTH_MODE) is no longer a setting")
                .hasMessageContaining("DevicePostMortem")
                .as("the value is not echoed: it could be a secret").hasMessageNotContaining("all-xyz");
    }

    @Test
    void shouldRefuseTheRemovedFieldRecheckIntervalAlsoWhenGivenDirectly() {
        assertThatThrownBy(() -> SinkConfig.fromEnvironment(with("DEVHEALTH_FIELD_RECHECK_INTERVAL_MS", "1000"), Map.of()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("DEVHEALTH_FIELD_RECHECK_INTERVAL_MS");
        assertThatThrownBy(() -> new SinkConfig(Map.of("kafka.bootstrap.servers", "k:9092", "schema.registry.url", "mem://t", "mode", "all")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("DEVHEALTH_MODE");
    }

    @Test
    void shouldKeepPostMortemsThirtyDaysUnlessTold() {
        assertThat(SinkConfig.fromEnvironment(REQUIRED, Map.of()).postMortemRetention()).isEqualTo(Duration.ofDays(30));
        assertThat(SinkConfig.fromEnvironment(with("DEVHEALTH_POSTMORTEM_RETENTION_MS", "86400000"), Map.of()).postMortemRetention())
                .isEqualTo(Duration.ofDays(1));
    }
}
