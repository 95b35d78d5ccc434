package io.devhealth.schema.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.NodeEvent;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.avro.Schema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The registry client and the serde against a real Apicurio Registry 3.3.3 served over HTTPS only,
 * with every API call requiring HTTP basic credentials (see {@link ApicurioServer.Tls}). The
 * certificate authority, the server certificate and all passwords are generated for the run.
 *
 * <p>Like {@link ApicurioRegistryIT}, it fails without a JDK >= 21 unless
 * {@code -Ddevhealth.it.apicurio.skip=true}. Server output: {@code target/apicurio-https-it.log}.
 */
class ApicurioHttpsRegistryIT {

    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(
            Long.getLong("devhealth.it.apicurio.startup.timeout.s", 120));
    private static final String USER = "devhealth";

    private static TestCertificates certificates;
    private static TestCertificates otherCa;
    private static String password;
    private static ApicurioServer server;

    @BeforeAll
    static void startRegistry() throws Exception {
        Path java = ApicurioServer.javaOrSkip();
        Path dir = Files.createTempDirectory(Paths.get("target").toAbsolutePath(), "registry-tls-");
        certificates = TestCertificates.create(dir.resolve("ca"));
        otherCa = TestCertificates.authorityOnly(dir.resolve("other-ca"));
        password = certificates.password() + "-user";
        Path home = Paths.get(System.getProperty("devhealth.it.apicurio.home", "target/apicurio"));
        HttpClient probe = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1))
                .sslContext(trustingPkcs12().tls().sslContext()).build();
        server = ApicurioServer.startHttps(java, home, Paths.get("target", "apicurio-https-it.log").toAbsolutePath(),
                STARTUP_TIMEOUT, new ApicurioServer.Tls(certificates.serverKeystore(), certificates.password(), USER, password),
                probe);
        System.out.println("Apicurio Registry (HTTPS, basic auth) startup took " + server.startupTime().toMillis() + " ms");
    }

    @AfterAll
    static void stopRegistry() {
        if (server != null) {
            server.close();
        }
    }

    /** Service-style settings: the CA in a PKCS12 truststore, basic credentials, as strings (env vars). */
    private static Map<String, Object> serviceSettings() {
        Map<String, Object> settings = new HashMap<>();
        settings.put(RegistryTls.TRUSTSTORE_LOCATION_CONFIG, certificates.truststore().toString());
        settings.put(RegistryTls.TRUSTSTORE_TYPE_CONFIG, "PKCS12");
        settings.put(RegistryTls.TRUSTSTORE_PASSWORD_CONFIG, certificates.password());
        settings.put(RegistryClientConfig.SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO_CONFIG, USER + ":" + password);
        return settings;
    }

    private static RegistryClientConfig trustingPkcs12() {
        String url = server == null ? "https://127.0.0.1:1" : server.ccompatUrl();
        return RegistryClientConfig.fromMap(url, serviceSettings());
    }

    @Test
    void shouldRegisterAndFetchOverHttpsWithBasicCredentials() {
        Schema schema = DeviceHealthReport.getClassSchema();

        int id = new ConfluentCompatSchemaRegistryClient(trustingPkcs12()).register("https.register-value", schema);

        ConfluentCompatSchemaRegistryClient fresh = new ConfluentCompatSchemaRegistryClient(trustingPkcs12());
        assertThat(fresh.getById(id)).isEqualTo(schema);
        assertThat(fresh.lookupId("https.register-value", schema)).isEqualTo(id);
    }

    @Test
    void shouldTrustTheCertificateAuthorityGivenAsAPemFile() {
        Map<String, Object> settings = serviceSettings();
        settings.put(RegistryTls.TRUSTSTORE_LOCATION_CONFIG, certificates.caPem().toString());
        settings.put(RegistryTls.TRUSTSTORE_TYPE_CONFIG, "PEM");
        settings.remove(RegistryTls.TRUSTSTORE_PASSWORD_CONFIG);
        ConfluentCompatSchemaRegistryClient client =
                new ConfluentCompatSchemaRegistryClient(RegistryClientConfig.fromMap(server.ccompatUrl(), settings));

        int id = client.register("https.pem-value", DeviceHealthReport.getClassSchema());

        assertThat(client.getById(id)).isEqualTo(DeviceHealthReport.getClassSchema());
    }

    @Test
    void shouldRefuseARegistryWhoseCertificateAnotherAuthoritySigned() {
        Map<String, Object> settings = serviceSettings();
        settings.put(RegistryTls.TRUSTSTORE_LOCATION_CONFIG, otherCa.truststore().toString());
        settings.put(RegistryTls.TRUSTSTORE_PASSWORD_CONFIG, otherCa.password());
        ConfluentCompatSchemaRegistryClient client =
                new ConfluentCompatSchemaRegistryClient(RegistryClientConfig.fromMap(server.ccompatUrl(), settings));

        assertThatThrownBy(() -> client.register("https.wrong-ca-value", DeviceHealthReport.getClassSchema()))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                    assertThat(e.httpStatus()).isEqualTo(SchemaRegistryException.NO_HTTP_STATUS);
                    assertThat(e.getMessage()).contains("TLS handshake with the schema registry failed")
                            .contains(server.ccompatUrl()).contains("schema.registry.ssl.truststore")
                            .doesNotContain(password).doesNotContain(otherCa.password());
                });
    }

    @Test
    void shouldRefuseTheJvmDefaultTrustForAPrivateAuthority() {
        Map<String, Object> settings = new HashMap<>(Map.of(
                RegistryClientConfig.SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO_CONFIG, USER + ":" + password));
        ConfluentCompatSchemaRegistryClient client =
                new ConfluentCompatSchemaRegistryClient(RegistryClientConfig.fromMap(server.ccompatUrl(), settings));

        assertThatThrownBy(() -> client.getById(1)).isInstanceOf(SchemaRegistryException.class)
                .hasMessageContaining("TLS handshake with the schema registry failed");
    }

    @Test
    void shouldRefuseMissingAndWrongCredentialsNamingTheUrlButNoSecret() {
        Map<String, Object> missing = serviceSettings();
        missing.remove(RegistryClientConfig.SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO_CONFIG);
        Map<String, Object> wrong = serviceSettings();
        String wrongPassword = "not-" + password;
        wrong.put(RegistryClientConfig.SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO_CONFIG, USER + ":" + wrongPassword);

        for (Map<String, Object> settings : java.util.List.of(missing, wrong)) {
            ConfluentCompatSchemaRegistryClient client =
                    new ConfluentCompatSchemaRegistryClient(RegistryClientConfig.fromMap(server.ccompatUrl(), settings));
            assertThatThrownBy(() -> client.register("https.unauthenticated-value", DeviceHealthReport.getClassSchema()))
                    .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                        assertThat(e.httpStatus()).isEqualTo(401);
                        assertThat(e.isRetriable()).isFalse();
                        assertThat(e.getMessage()).contains(server.ccompatUrl()).contains("credentials")
                                .doesNotContain(password).doesNotContain(certificates.password());
                    });
        }
    }

    @Test
    void shouldRoundTripTheSerdeConfiguredFromServiceOptions() {
        // The path every service takes: SchemaRegistries.fromUrl(config.schemaRegistryUrl(), config.originals()),
        // whose originals carry these options (from DEVHEALTH_* variables: service-runtime's ServiceConfigRegistryOptionsTest).
        SchemaRegistryClient producerSide = SchemaRegistries.fromUrl(server.ccompatUrl(), serviceSettings());
        AvroSerde<NodeEvent> producer = AvroSerde.of(NodeEvent.class, producerSide);
        AvroSerde<NodeEvent> consumer = new AvroSerde<>();
        Map<String, Object> consumerConfig = new HashMap<>(serviceSettings());
        consumerConfig.put(AvroSerde.SCHEMA_REGISTRY_URL_CONFIG, server.ccompatUrl());
        consumerConfig.put(AvroSerde.AVRO_CLASS_CONFIG, NodeEvent.class.getName());
        consumerConfig.put(RegistryClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "9000"); // another client: empty caches
        consumer.configure(consumerConfig, false);

        byte[] bytes = producer.serializer().serialize("https.roundtrip", SampleRecords.eventWithHeartbeat());

        assertThat(producerSide.toString()).doesNotContain(password).doesNotContain(certificates.password());
        assertThat(consumer.deserializer().deserialize("https.roundtrip", bytes)).isEqualTo(SampleRecords.eventWithHeartbeat());
    }

    @Test
    void shouldRefusePlainHttpOnTheHttpsPort() {
        String plain = server.ccompatUrl().replace("https://", "http://");
        ConfluentCompatSchemaRegistryClient client = new ConfluentCompatSchemaRegistryClient(
                RegistryClientConfig.builder(plain).connectTimeout(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(3))
                        .credentials(RegistryCredentials.basic(USER, password)).build());

        assertThatThrownBy(() -> client.getById(1)).isInstanceOfSatisfying(SchemaRegistryException.class,
                e -> assertThat(e.httpStatus() / 100).isNotEqualTo(2));
    }
}
