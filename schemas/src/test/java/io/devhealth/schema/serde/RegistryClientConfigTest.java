package io.devhealth.schema.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.apache.kafka.common.config.types.Password;
import org.junit.jupiter.api.Test;

class RegistryClientConfigTest {

    @Test
    void shouldReadBasicCredentialsAndTimeoutsWithoutShowingThePassword() {
        RegistryClientConfig config = RegistryClientConfig.fromMap("http://127.0.0.1:8080/apis/ccompat/v7", Map.of(
                RegistryClientConfig.BASIC_AUTH_USER_INFO_CONFIG, "svc:s3cr3t:with-colon",
                RegistryClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "2500",
                RegistryClientConfig.CONNECT_TIMEOUT_MS_CONFIG, 750));

        assertThat(config.credentials()).isEqualTo(RegistryCredentials.basic("svc", "s3cr3t:with-colon"));
        assertThat(config.requestTimeout()).isEqualTo(Duration.ofMillis(2500));
        assertThat(config.connectTimeout()).isEqualTo(Duration.ofMillis(750));
        assertThat(config.toString()).contains("svc").doesNotContain("s3cr3t");
    }

    @Test
    void shouldReadBearerTokenFromAKafkaPassword() {
        RegistryClientConfig config = RegistryClientConfig.fromMap("https://registry.example",
                Map.of(RegistryClientConfig.BEARER_AUTH_TOKEN_CONFIG, new Password("tok-123")));

        assertThat(config.credentials().authorizationHeader()).contains("Bearer tok-123");
        assertThat(config.toString()).doesNotContain("tok-123");
    }

    @Test
    void shouldDefaultToNoCredentialsAndDefaultTimeouts() {
        RegistryClientConfig config = RegistryClientConfig.fromMap("http://r", Map.of());

        assertThat(config.credentials().authorizationHeader()).isEmpty();
        assertThat(config.requestTimeout()).isEqualTo(RegistryClientConfig.DEFAULT_REQUEST_TIMEOUT);
        assertThat(config.connectTimeout()).isEqualTo(RegistryClientConfig.DEFAULT_CONNECT_TIMEOUT);
    }

    @Test
    void shouldRejectAmbiguousOrMalformedSettingsWithoutEchoingSecrets() {
        assertThatThrownBy(() -> RegistryClientConfig.fromMap("http://r", Map.of(
                RegistryClientConfig.BASIC_AUTH_USER_INFO_CONFIG, "u:p",
                RegistryClientConfig.BEARER_AUTH_TOKEN_CONFIG, "t"))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RegistryClientConfig.fromMap("http://r",
                Map.of(RegistryClientConfig.BASIC_AUTH_USER_INFO_CONFIG, "nocolon")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageNotContaining("nocolon");
        assertThatThrownBy(() -> RegistryClientConfig.of("http://u:hunter2@r"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageNotContaining("hunter2");
        assertThatThrownBy(() -> RegistryClientConfig.of("ftp://r")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RegistryClientConfig.fromMap("http://r",
                Map.of(RegistryClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "0"))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldPreferTheSchemaRegistryPrefixedCredentialKeys() {
        RegistryClientConfig config = RegistryClientConfig.fromMap("https://r", Map.of(
                RegistryClientConfig.SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO_CONFIG, "svc:new",
                RegistryClientConfig.BASIC_AUTH_USER_INFO_CONFIG, "svc:old"));
        RegistryClientConfig bearer = RegistryClientConfig.fromMap("https://r", Map.of(
                RegistryClientConfig.SCHEMA_REGISTRY_BEARER_AUTH_TOKEN_CONFIG, "tok"));

        assertThat(config.credentials()).isEqualTo(RegistryCredentials.basic("svc", "new"));
        assertThat(bearer.credentials().authorizationHeader()).contains("Bearer tok");
        assertThat(config.tls()).isEqualTo(RegistryTls.none());
    }
}
