package io.devhealth.schema.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class SchemaRegistriesTest {

    @Test
    void shouldShareOneInMemoryRegistryPerName() {
        SchemaRegistryClient producer = SchemaRegistries.fromUrl("mem://registries-test", Map.of());
        SchemaRegistryClient consumer = SchemaRegistries.fromUrl("mem://registries-test");
        SchemaRegistryClient other = SchemaRegistries.fromUrl("mem://registries-test-other");

        assertThat(producer).isInstanceOf(InMemorySchemaRegistry.class).isSameAs(consumer).isNotSameAs(other);
    }

    @Test
    void shouldCacheOneHttpClientPerUrlAndSettings() {
        SchemaRegistryClient a = SchemaRegistries.fromUrl("http://127.0.0.1:1/apis/ccompat/v7", Map.of());
        SchemaRegistryClient b = SchemaRegistries.fromUrl("http://127.0.0.1:1/apis/ccompat/v7", Map.of("unrelated", "x"));
        SchemaRegistryClient c = SchemaRegistries.fromUrl("http://127.0.0.1:2/apis/ccompat/v7", Map.of());
        SchemaRegistryClient authenticated = SchemaRegistries.fromUrl("http://127.0.0.1:1/apis/ccompat/v7",
                Map.of(RegistryClientConfig.BEARER_AUTH_TOKEN_CONFIG, "t"));

        assertThat(a).isInstanceOf(ConfluentCompatSchemaRegistryClient.class).isSameAs(b).isNotSameAs(c)
                .isNotSameAs(authenticated);
    }

    @Test
    void shouldRejectUnknownSchemesAndEmptyMemNamesWithoutEchoingCredentials() {
        assertThatThrownBy(() -> SchemaRegistries.fromUrl("kafka://u:pw@x", Map.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageNotContaining("pw");
        assertThatThrownBy(() -> SchemaRegistries.fromUrl("mem://", Map.of()))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
