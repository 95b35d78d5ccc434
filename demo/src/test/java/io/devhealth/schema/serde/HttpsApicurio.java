package io.devhealth.schema.serde;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The real Apicurio Registry over HTTPS with basic authentication ({@link ApicurioServer#startHttps}),
 * with a certificate authority, a server certificate and passwords generated for the run
 * ({@link TestCertificates}), for tests outside this package.
 *
 * <p>Lives in the demo's tests under the schemas' package because the fixtures it wraps
 * (from the schemas test-jar) are package-private; it adds no server logic of its own.
 */
public final class HttpsApicurio implements AutoCloseable {

    public static final String USER = "devhealth";

    private final TestCertificates certificates;
    private final String userPassword;
    private final ApicurioServer server;

    private HttpsApicurio(TestCertificates certificates, String userPassword, ApicurioServer server) {
        this.certificates = certificates;
        this.userPassword = userPassword;
        this.server = server;
    }

    /** The {@code bin/java} to run the registry with, or the calling test skipped or failed as the schemas' Apicurio ITs are. */
    public static Path javaOrSkip() {
        return ApicurioServer.javaOrSkip();
    }

    /**
     * Generates the certificates under {@code dir}, then starts the registry from {@code home} with
     * {@code java}, its output in {@code log}, and waits until it answers with the generated user.
     */
    public static HttpsApicurio start(Path java, Path home, Path dir, Path log, Duration timeout)
            throws IOException, InterruptedException {
        TestCertificates certificates = TestCertificates.create(dir);
        // Not the store password: a leak of either is then told apart in the log scan.
        String userPassword = certificates.password() + "-user";
        HttpClient probe = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1))
                .sslContext(RegistryTls.fromMap(trustSettings(certificates)).sslContext()).build();
        ApicurioServer server = ApicurioServer.startHttps(java, home, log, timeout,
                new ApicurioServer.Tls(certificates.serverKeystore(), certificates.password(), USER, userPassword), probe);
        return new HttpsApicurio(certificates, userPassword, server);
    }

    private static Map<String, Object> trustSettings(TestCertificates certificates) {
        return Map.of(RegistryTls.TRUSTSTORE_LOCATION_CONFIG, certificates.truststore().toString(),
                RegistryTls.TRUSTSTORE_TYPE_CONFIG, "PKCS12",
                RegistryTls.TRUSTSTORE_PASSWORD_CONFIG, certificates.password());
    }

    /** The Confluent-compatible API root, {@code https://127.0.0.1:<port>/apis/ccompat/v7}. */
    public String ccompatUrl() {
        return server.ccompatUrl();
    }

    public Duration startupTime() {
        return server.startupTime();
    }

    /**
     * The {@code schema.registry.*} service options that reach this registry: its URL, the CA as a
     * PKCS12 truststore with its password, and the basic credentials, as a deployment sets them.
     */
    public Map<String, String> serviceOptions() {
        return Map.of(
                "schema.registry.url", ccompatUrl(),
                RegistryTls.TRUSTSTORE_LOCATION_CONFIG, certificates.truststore().toString(),
                RegistryTls.TRUSTSTORE_TYPE_CONFIG, "PKCS12",
                RegistryTls.TRUSTSTORE_PASSWORD_CONFIG, certificates.password(),
                RegistryClientConfig.SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO_CONFIG, USER + ":" + userPassword);
    }

    /**
     * What must never be logged: the store password, the user's password, and the
     * {@code Authorization} header value that carries them.
     */
    public List<String> secrets() {
        String header = RegistryCredentials.basic(USER, userPassword).authorizationHeader().orElseThrow();
        return List.of(certificates.password(), userPassword, header.substring(header.indexOf(' ') + 1));
    }

    /**
     * The registry's subjects ({@code GET /subjects}), asked over HTTPS with the basic credentials
     * by a client of its own, not the services' registry client.
     */
    public List<String> subjects() throws IOException, InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2))
                .sslContext(RegistryTls.fromMap(trustSettings(certificates)).sslContext()).build();
        HttpRequest request = HttpRequest.newBuilder(URI.create(ccompatUrl() + "/subjects"))
                .timeout(Duration.ofSeconds(10))
                .header("Authorization", RegistryCredentials.basic(USER, userPassword).authorizationHeader().orElseThrow())
                .header("Accept", ConfluentCompatSchemaRegistryClient.CONTENT_TYPE)
                .GET().build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException("GET " + request.uri() + " answered HTTP " + response.statusCode());
        }
        List<String> subjects = new ArrayList<>();
        for (JsonNode subject : new ObjectMapper().readTree(response.body())) {
            subjects.add(subject.asText());
        }
        return subjects;
    }

    @Override
    public void close() {
        server.close();
    }
}
