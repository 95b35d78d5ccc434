package io.devhealth.schema.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.schema.avro.NodeHeartbeat;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.HashMap;
import java.util.Map;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.apache.kafka.common.config.types.Password;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The registry client's TLS settings: parsing, redaction, store errors, and what the client presents
 * in a handshake (mutual TLS) against {@link FakeConfluentRegistry#https}. Apicurio cannot require
 * client certificates (fixed when it is built), so the certificate the client sends is checked here.
 */
class RegistryTlsTest {

    @TempDir
    static Path dir;

    private static TestCertificates certificates;

    @BeforeAll
    static void generate() {
        certificates = TestCertificates.create(dir.resolve("ca"));
    }

    private static Map<String, Object> trustAndClientCertificate() {
        Map<String, Object> settings = new HashMap<>();
        settings.put(RegistryTls.TRUSTSTORE_LOCATION_CONFIG, certificates.truststore().toString());
        settings.put(RegistryTls.TRUSTSTORE_TYPE_CONFIG, "PKCS12");
        settings.put(RegistryTls.TRUSTSTORE_PASSWORD_CONFIG, new Password(certificates.password()));
        settings.put(RegistryTls.KEYSTORE_LOCATION_CONFIG, certificates.clientKeystore().toString());
        settings.put(RegistryTls.KEYSTORE_TYPE_CONFIG, "PKCS12");
        settings.put(RegistryTls.KEYSTORE_PASSWORD_CONFIG, certificates.password());
        settings.put(RegistryTls.KEY_PASSWORD_CONFIG, certificates.password());
        return settings;
    }

    @Test
    void shouldBeNoneWithoutAnyRegistryTlsKey() {
        RegistryTls tls = RegistryTls.fromMap(Map.of("ssl.truststore.location", "/kafka/only.p12",
                RegistryTls.TRUSTSTORE_LOCATION_CONFIG, " "));

        assertThat(tls).isEqualTo(RegistryTls.none());
        assertThat(tls.isConfigured()).isFalse();
        assertThat(tls).hasToString("none");
    }

    @Test
    void shouldReadPrefixedKafkaSslKeysAndShowPathsButNeverPasswords() {
        RegistryTls tls = RegistryTls.fromMap(trustAndClientCertificate());

        assertThat(tls.isConfigured()).isTrue();
        assertThat(tls.hasClientCertificate()).isTrue();
        assertThat(tls.settings()).containsEntry("ssl.truststore.location", certificates.truststore().toString())
                .containsEntry("ssl.keystore.password", new Password(certificates.password()));
        assertThat(tls.toString()).contains(certificates.truststore().toString())
                .contains("schema.registry.ssl.keystore.password=***").doesNotContain(certificates.password());
        assertThat(RegistryTls.fromMap(trustAndClientCertificate())).as("equal settings share one cached client")
                .isEqualTo(tls);
    }

    @Test
    void shouldRejectAStoreThatCannotBeOpenedNamingTheFileButNotThePassword() {
        Map<String, Object> settings = trustAndClientCertificate();
        settings.put(RegistryTls.TRUSTSTORE_PASSWORD_CONFIG, "wrong-" + certificates.password());
        RegistryTls wrongPassword = RegistryTls.fromMap(settings);
        settings.put(RegistryTls.TRUSTSTORE_PASSWORD_CONFIG, certificates.password());
        settings.put(RegistryTls.TRUSTSTORE_LOCATION_CONFIG, dir.resolve("missing.p12").toString());
        RegistryTls missingFile = RegistryTls.fromMap(settings);

        assertThatThrownBy(wrongPassword::sslContext).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("schema registry").hasMessageContaining(certificates.truststore().toString())
                .hasMessageNotContaining(certificates.password());
        assertThatThrownBy(() -> new ConfluentCompatSchemaRegistryClient(
                RegistryClientConfig.builder("https://127.0.0.1:1/apis/ccompat/v7").tls(missingFile).build()))
                .as("a service fails at start-up, not on its first record")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("missing.p12");
    }

    @Test
    void shouldRejectAnUnknownSettingValueAndTlsForAPlainHttpUrl() {
        assertThatThrownBy(() -> RegistryTls.fromMap(Map.of("schema.registry.ssl.enabled.protocols", 42)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ssl.enabled.protocols");
        assertThatThrownBy(() -> RegistryClientConfig.fromMap("http://127.0.0.1:8080/apis/ccompat/v7",
                trustAndClientCertificate())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not https://").hasMessageNotContaining(certificates.password());
    }

    @Test
    void shouldPresentTheClientCertificateToARegistryThatRequiresOne() throws Exception {
        try (FakeConfluentRegistry fake = FakeConfluentRegistry.https(serverContext(), true)) {
            ConfluentCompatSchemaRegistryClient mtls = new ConfluentCompatSchemaRegistryClient(
                    RegistryClientConfig.fromMap(fake.url(), trustAndClientCertificate()));
            Map<String, Object> trustOnly = trustAndClientCertificate();
            trustOnly.keySet().removeIf(key -> key.contains("keystore") || key.contains("key.password"));
            ConfluentCompatSchemaRegistryClient noCertificate = new ConfluentCompatSchemaRegistryClient(
                    RegistryClientConfig.fromMap(fake.url(), trustOnly));

            assertThat(mtls.register("mtls-value", NodeHeartbeat.getClassSchema())).isEqualTo(1);
            assertThatThrownBy(() -> noCertificate.register("mtls-value", NodeHeartbeat.getClassSchema()))
                    .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                        assertThat(e.httpStatus()).isEqualTo(SchemaRegistryException.NO_HTTP_STATUS);
                        assertThat(e.getMessage()).contains(fake.url()).doesNotContain(certificates.password());
                    });
            assertThat(fake.requests()).hasSize(1);
        }
    }

    @Test
    void shouldTrustAPemFileAndRefuseAServerAnotherAuthoritySigned() throws Exception {
        TestCertificates other = TestCertificates.authorityOnly(dir.resolve("other"));
        try (FakeConfluentRegistry fake = FakeConfluentRegistry.https(serverContext(), false)) {
            ConfluentCompatSchemaRegistryClient pem = new ConfluentCompatSchemaRegistryClient(RegistryClientConfig.fromMap(
                    fake.url(), Map.of(RegistryTls.TRUSTSTORE_LOCATION_CONFIG, certificates.caPem().toString(),
                            RegistryTls.TRUSTSTORE_TYPE_CONFIG, "PEM")));
            ConfluentCompatSchemaRegistryClient wrongCa = new ConfluentCompatSchemaRegistryClient(RegistryClientConfig.fromMap(
                    fake.url(), Map.of(RegistryTls.TRUSTSTORE_LOCATION_CONFIG, other.caPem().toString(),
                            RegistryTls.TRUSTSTORE_TYPE_CONFIG, "PEM")));

            assertThat(pem.register("pem-value", NodeHeartbeat.getClassSchema())).isEqualTo(1);
            assertThatThrownBy(() -> wrongCa.getById(1)).isInstanceOf(SchemaRegistryException.class)
                    .hasMessageContaining("TLS handshake with the schema registry failed").hasMessageContaining(fake.url());
        }
    }

    /** The fake's side, built with the JDK alone so that it does not share code with what it checks. */
    private static SSLContext serverContext() throws Exception {
        char[] password = certificates.password().toCharArray();
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(certificates.serverKeystore())) {
            keys.load(in, password);
        }
        KeyStore trusted = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(certificates.truststore())) {
            trusted.load(in, password);
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, password);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trusted);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return context;
    }
}
