package io.devhealth.runtime.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.serde.RegistryClientConfig;
import io.devhealth.schema.serde.RegistryCredentials;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.types.Password;
import org.junit.jupiter.api.Test;

/** The schema registry options every service shares, from the environment to the client's settings. */
class ServiceConfigRegistryOptionsTest {

    private static final class SharedOptions extends ServiceConfig {
        static final ConfigDef DEFINITION = pipelineOptions();

        SharedOptions(Map<String, ?> values) {
            super(DEFINITION, values);
        }
    }

    private static SharedOptions fromEnv(Map<String, String> env) {
        return new SharedOptions(ServiceConfig.resolve(SharedOptions.DEFINITION, env, Map.of()));
    }

    @Test
    void shouldReadRegistryTlsAndCredentialsFromDevhealthVariables() {
        SharedOptions config = fromEnv(Map.of(
                "DEVHEALTH_KAFKA_BOOTSTRAP_SERVERS", "kafka:9093",
                "DEVHEALTH_SCHEMA_REGISTRY_URL", "https://registry:8443/apis/ccompat/v7",
                "DEVHEALTH_SCHEMA_REGISTRY_SSL_TRUSTSTORE_LOCATION", "/etc/devhealth/registry-ca.pem",
                "DEVHEALTH_SCHEMA_REGISTRY_SSL_TRUSTSTORE_TYPE", "PEM",
                "DEVHEALTH_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO", "collector:s3cr3t",
                "DEVHEALTH_SCHEMA_REGISTRY_REQUEST_TIMEOUT_MS", "2500"));

        RegistryClientConfig client = RegistryClientConfig.fromMap(config.schemaRegistryUrl(), config.originals());

        assertThat(config.getPassword(ServiceConfig.SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO))
                .isEqualTo(new Password("collector:s3cr3t"));
        assertThat(client.credentials()).isEqualTo(RegistryCredentials.basic("collector", "s3cr3t"));
        assertThat(client.tls().settings()).containsEntry("ssl.truststore.location", "/etc/devhealth/registry-ca.pem")
                .containsEntry("ssl.truststore.type", "PEM");
        assertThat(client.requestTimeout()).hasMillis(2500);
        assertThat(client.toString()).doesNotContain("s3cr3t");
    }

    @Test
    void shouldDocumentEveryRegistryOptionWithItsVariableAndNoSecretDefault() {
        String help = ServiceConfig.describe(SharedOptions.DEFINITION);

        assertThat(help).contains("DEVHEALTH_SCHEMA_REGISTRY_SSL_TRUSTSTORE_LOCATION",
                "DEVHEALTH_SCHEMA_REGISTRY_SSL_KEYSTORE_LOCATION", "DEVHEALTH_SCHEMA_REGISTRY_SSL_KEY_PASSWORD",
                "DEVHEALTH_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO", "DEVHEALTH_SCHEMA_REGISTRY_BEARER_AUTH_TOKEN",
                "DEVHEALTH_SCHEMA_REGISTRY_CONNECT_TIMEOUT_MS");
        assertThat(SharedOptions.DEFINITION.configKeys().get(ServiceConfig.SCHEMA_REGISTRY_BEARER_AUTH_TOKEN).type)
                .isEqualTo(ConfigDef.Type.PASSWORD);
        assertThat(SharedOptions.DEFINITION.configKeys().get(ServiceConfig.SCHEMA_REGISTRY_SSL_TRUSTSTORE_PASSWORD).type)
                .isEqualTo(ConfigDef.Type.PASSWORD);
    }
}
