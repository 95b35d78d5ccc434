package io.devhealth.query;

import io.devhealth.query.access.AccessFilter;
import io.devhealth.query.access.AccessPolicy;
import io.devhealth.query.access.QuerySecurityConfig;
import io.devhealth.query.http.RequestGuard;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.devhealth.simulators.kafka.KafkaSecurity;
import io.devhealth.testkit.time.MutableClock;
import io.devhealth.testkit.tls.TestCertificates;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Two {@link QueryServer} instances on loopback (no Kafka: a {@link FakeCluster} says node-a is A's and
 * node-b is B's, and the pod lives on B): authentication, forwarding with the caller's credentials (its
 * token, or its certificate's subject named by the forwarding instance), read-only methods, validation
 * and limits, over HTTP with bearer tokens and over HTTPS with client certificates.
 */
class QueryServerSecurityIT {

    private static final String TOKEN = "tok-" + KafkaSecurity.randomSecret();
    private static final String OTHER_TOKEN = "tok-" + KafkaSecurity.randomSecret();

    private final ObjectMapper json = new ObjectMapper();
    private final MutableClock clock = MutableClock.at("2026-11-29T10:00:00Z");
    private final List<QueryServer> servers = new ArrayList<>();
    private HttpClient http = HttpClient.newHttpClient();
    private String scheme = "http";
    private QueryServer a;
    private QueryServer b;

    /** Key material is made once (keytool takes seconds): a server and a client certificate for 127.0.0.1, and a truststore of both. */
    @TempDir
    static Path tlsDir;
    private static TestCertificates tls;
    /** The instances' own certificate, as the shipped StatefulSet gives every instance the same one. */
    private static Path serverKeystore;
    private static Path clientKeystore;
    /** Another caller the truststore accepts. */
    private static Path strangerKeystore;

    @BeforeAll
    static void makeCertificates() {
        tls = TestCertificates.create(tlsDir);
        serverKeystore = tls.keyPair("server", "CN=localhost");
        clientKeystore = tls.keyPair("client", "CN=devhealth-client");
        strangerKeystore = tls.keyPair("stranger", "CN=stranger,O=elsewhere");
    }

    @AfterEach
    void stop() {
        servers.forEach(QueryServer::close);
    }

    private void startPair(Map<String, Object> settings, Map<String, Object> metricsSettings) {
        Map<String, Object> all = new HashMap<>(settings);
        all.putAll(metricsSettings);
        QuerySecurityConfig security = QuerySecurityConfig.from(all);
        startPair(security, security);
    }

    private void startPair(QuerySecurityConfig securityA, QuerySecurityConfig securityB) {
        a = QueryServer.bind("127.0.0.1", 0, clock, securityA);
        b = QueryServer.bind("127.0.0.1", 0, clock, securityB);
        servers.add(a);
        servers.add(b);
        HostInfo hostA = new HostInfo("127.0.0.1", a.port());
        HostInfo hostB = new HostInfo("127.0.0.1", b.port());
        Map<String, HostInfo> owners = Map.of("node-a", hostA, "node-b", hostB);
        a.serve(new FakeCluster(hostA, owners, List.of(hostB), Set.of()), () -> "devhealth_up 1\n", new SimpleMeterRegistry());
        b.serve(new FakeCluster(hostB, owners, List.of(hostA), Set.of("ml/train-0")), () -> "devhealth_up 1\n", new SimpleMeterRegistry());
    }

    /** @param headers more headers, name and value after each other */
    private HttpResponse<String> send(QueryServer server, String method, String path, String token, String body, String... headers)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(scheme + "://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(20))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(QueryServer server, String path, String token, String... headers) throws Exception {
        return send(server, "GET", path, token, null, headers);
    }

    private JsonNode error(HttpResponse<String> response, int status) throws IOException {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
        JsonNode body = json.readTree(response.body());
        assertThat(body.get("status").asInt()).isEqualTo(status);
        return body;
    }

    private static Map<String, Object> tokenFile(Path dir, String... tokens) throws IOException {
        Path file = Files.writeString(dir.resolve("tokens"), String.join("\n", tokens) + "\n");
        return Map.of(QuerySecurityConfig.TOKEN_FILE, file.toString(), QuerySecurityConfig.TOKEN_RELOAD_INTERVAL, "100");
    }

    /** Tokens over plain HTTP, which needs the opt-out: most tests here are about the tokens, not the transport. */
    private static Map<String, Object> tokenFileOverHttp(Path dir, String... tokens) throws IOException {
        Map<String, Object> settings = new HashMap<>(tokenFile(dir, tokens));
        settings.put(QuerySecurityConfig.INSECURE, "true");
        return settings;
    }

    @Test
    void shouldRequireABearerTokenForV1AndChallengeWithoutOne(@TempDir Path dir) throws Exception {
        startPair(tokenFileOverHttp(dir, TOKEN), Map.of());

        HttpResponse<String> missing = get(a, "/v1/nodes/node-a/devices", null);
        assertThat(error(missing, 401).get("message").asText()).contains("Bearer");
        assertThat(missing.headers().firstValue("WWW-Authenticate")).hasValue("Bearer realm=\"devhealth\"");

        HttpResponse<String> wrong = get(a, "/v1/nodes/node-a/devices", OTHER_TOKEN);
        error(wrong, 401);
        assertThat(wrong.headers().firstValue("WWW-Authenticate")).get().asString().contains("invalid_token");
        assertThat(wrong.body()).doesNotContain(OTHER_TOKEN);

        assertThat(error(get(a, "/v1/no/such/thing", null), 401)).isNotNull();
        assertThat(get(a, "/v1/nodes/node-a/devices", TOKEN).statusCode()).isEqualTo(200);
        assertThat(error(get(a, "/v1/no/such/thing", TOKEN), 404).get("message").asText()).contains("no such endpoint");
    }

    @Test
    void shouldKeepProbesAndMetricsOpenByDefault(@TempDir Path dir) throws Exception {
        startPair(tokenFileOverHttp(dir, TOKEN), Map.of());

        assertThat(get(a, "/healthz", null).statusCode()).isEqualTo(200);
        assertThat(get(a, "/readyz", null).body()).isEqualTo("RUNNING\n");
        assertThat(get(a, "/metrics", null).body()).contains("devhealth_up 1");
        assertThat(error(get(a, "/healthzz", null), 404)).isNotNull();
    }

    @Test
    void shouldProtectMetricsWhenConfigured(@TempDir Path dir) throws Exception {
        startPair(tokenFileOverHttp(dir, TOKEN), Map.of(QuerySecurityConfig.AUTHENTICATE_METRICS, "true"));

        assertThat(error(get(a, "/metrics", null), 401)).isNotNull();
        assertThat(get(a, "/metrics", TOKEN).statusCode()).isEqualTo(200);
        assertThat(get(a, "/healthz", null).statusCode()).isEqualTo(200);
    }

    @Test
    void shouldForwardTheCallersTokenToTheOwningInstance(@TempDir Path dir) throws Exception {
        startPair(tokenFileOverHttp(dir, TOKEN), Map.of());

        HttpResponse<String> node = get(a, "/v1/nodes/node-b/devices", TOKEN);
        assertThat(node.statusCode()).as(node.body()).isEqualTo(200);
        assertThat(json.readTree(node.body()).get("node").asText()).isEqualTo("node-b");

        HttpResponse<String> pod = get(a, "/v1/pods/ml/train-0/devices", TOKEN);
        assertThat(pod.statusCode()).as(pod.body()).isEqualTo(200);
        assertThat(json.readTree(pod.body()).get("node").asText()).isEqualTo("served-by-" + b.port());

        error(get(a, "/v1/nodes/node-b/devices", null), 401);
    }

    @Test
    void shouldPickUpARotatedTokenFile(@TempDir Path dir) throws Exception {
        Map<String, Object> settings = tokenFileOverHttp(dir, TOKEN);
        startPair(settings, Map.of());
        assertThat(get(a, "/v1/nodes/node-a/devices", TOKEN).statusCode()).isEqualTo(200);

        Files.writeString(Path.of((String) settings.get(QuerySecurityConfig.TOKEN_FILE)), OTHER_TOKEN + "\n");
        clock.advance(Duration.ofSeconds(1));

        error(get(a, "/v1/nodes/node-a/devices", TOKEN), 401);
        assertThat(get(a, "/v1/nodes/node-a/devices", OTHER_TOKEN).statusCode()).isEqualTo(200);
    }

    @Test
    void shouldBeReadOnly(@TempDir Path dir) throws Exception {
        startPair(tokenFileOverHttp(dir, TOKEN), Map.of());

        for (String method : List.of("POST", "PUT", "DELETE", "PATCH", "OPTIONS")) {
            HttpResponse<String> response = send(a, method, "/v1/nodes/node-a/devices", TOKEN, method.equals("DELETE") ? null : "{}");
            error(response, 405);
            assertThat(response.headers().firstValue("Allow")).hasValue("GET, HEAD");
        }
        error(send(a, "POST", "/healthz", null, "x"), 405);

        HttpResponse<String> head = send(a, "HEAD", "/v1/nodes/node-a/devices", TOKEN, null);
        assertThat(head.statusCode()).isEqualTo(200);
        assertThat(head.body()).isEmpty();
        error(send(a, "GET", "/v1/nodes/node-a/devices", TOKEN, "a body"), 413);
    }

    @Test
    void shouldAnswerBadInputWithAClear400(@TempDir Path dir) throws Exception {
        startPair(tokenFileOverHttp(dir, TOKEN), Map.of());

        assertThat(error(get(a, "/v1/nodes/Node_A/devices", TOKEN), 400).get("message").asText())
                .contains("node name must be a DNS-1123 subdomain").contains("'Node_A'");
        assertThat(error(get(a, "/v1/pods/ML/train-0/devices", TOKEN), 400).get("message").asText()).contains("namespace");
        assertThat(error(get(a, "/v1/pods/ml/train-0/devices?at=yesterday", TOKEN), 400).get("message").asText()).contains("RFC 3339");
        assertThat(error(get(a, "/v1/pods/ml/train-0/devices?limit=5", TOKEN), 400).get("message").asText()).contains("unknown parameter");
        assertThat(error(get(a, "/v1/nodes/node-a/devices?limit=0", TOKEN), 400).get("message").asText()).contains("limit");
        assertThat(error(get(a, "/v1/nodes/node-a/devices?continue=bm90LWEtdG9rZW4", TOKEN), 400).get("message").asText())
                .contains("continue");
        assertThat(error(get(a, "/v1/devices/node-a/gpu.example.com/po%2F%2Fol/gpu-0/history", TOKEN), 400).get("message").asText())
                .contains("pool");
        assertThat(error(get(a, "/v1/devices/node-a/gpu.example.com/pool/gpu-0/history?from=2026-11-29T10:00:00Z&to=2026-11-29T09:00:00Z",
                TOKEN), 400).get("message").asText()).contains("after");
        error(get(a, "/v1/nodes/" + "n".repeat(RequestGuard.MAX_URI_LENGTH) + "/devices", TOKEN), 414);
    }

    @Test
    void shouldNeverLogATokenOrAStorePassword(@TempDir Path dir) throws Exception {
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ch.qos.logback.classic.Level before = ((Logger) LoggerFactory.getLogger("io.devhealth")).getLevel();
        ((Logger) LoggerFactory.getLogger("io.devhealth")).setLevel(ch.qos.logback.classic.Level.DEBUG);
        ListAppender<ILoggingEvent> logs = new ListAppender<>();
        logs.start();
        root.addAppender(logs);
        try {
            Map<String, Object> settings = new HashMap<>(tokenFile(dir, TOKEN));
            settings.put(QuerySecurityConfig.TOKEN, OTHER_TOKEN);
            settings.putAll(tlsSettings(true));
            startPair(settings, Map.of());
            useClient(false);
            get(a, "/v1/nodes/node-b/devices", TOKEN);
            get(a, "/v1/nodes/node-a/devices", OTHER_TOKEN);
            get(a, "/v1/nodes/node-a/devices", TOKEN + "x");
            send(a, "POST", "/v1/nodes/node-a/devices", TOKEN, TOKEN);
            assertThatThrownBy(() -> QueryServer.bind("127.0.0.1", 0, clock, QuerySecurityConfig.from(Map.of(
                    QuerySecurityConfig.INSECURE, "true",
                    QuerySecurityConfig.KEYSTORE, serverKeystore.toString(),
                    QuerySecurityConfig.KEYSTORE_PASSWORD, "wrong-" + TOKEN)))).isInstanceOf(IllegalStateException.class)
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain(TOKEN));
        } finally {
            root.detachAppender(logs);
            ((Logger) LoggerFactory.getLogger("io.devhealth")).setLevel(before);
        }
        List<String> secrets = new ArrayList<>(List.of(TOKEN, OTHER_TOKEN));
        secrets.add(tls.password());
        assertThat(logs.list).as("the run logged something").isNotEmpty();
        for (ILoggingEvent event : logs.list) {
            String text = event.getFormattedMessage() + (event.getThrowableProxy() == null ? "" : ThrowableProxyUtil.asString(event.getThrowableProxy()));
            for (String secret : secrets) {
                assertThat(text).doesNotContain(secret);
            }
        }
    }

    private static Map<String, Object> tlsSettings(boolean clientCertificates) {
        Map<String, Object> settings = new HashMap<>();
        settings.put(QuerySecurityConfig.KEYSTORE, serverKeystore.toString());
        settings.put(QuerySecurityConfig.KEYSTORE_PASSWORD, tls.password());
        if (clientCertificates) {
            settings.put(QuerySecurityConfig.TRUSTSTORE, tls.truststore().toString());
            settings.put(QuerySecurityConfig.TRUSTSTORE_PASSWORD, tls.password());
        }
        return settings;
    }

    /** An HTTPS client that trusts the test certificates, presenting the client certificate when asked to. */
    private void useClient(boolean withCertificate) {
        useClient(withCertificate ? clientKeystore : null);
    }

    /** An HTTPS client that trusts the test certificates, presenting {@code keystore}'s certificate (null: none). */
    private void useClient(Path keystore) {
        http = tls.httpClient(keystore);
        scheme = "https";
    }

    @Test
    void shouldAuthenticateByClientCertificateOverHttpsAndForwardForIt(@TempDir Path dir) throws Exception {
        startPair(tlsSettings(true), Map.of());

        useClient(true);
        assertThat(get(a, "/v1/nodes/node-a/devices", null).statusCode()).isEqualTo(200);
        HttpResponse<String> forwarded = get(a, "/v1/nodes/node-b/devices", null);
        assertThat(forwarded.statusCode()).as(forwarded.body()).isEqualTo(200);
        assertThat(json.readTree(forwarded.body()).get("node").asText()).isEqualTo("node-b");
        assertThat(get(a, "/healthz", null).statusCode()).isEqualTo(200);

        useClient(false);
        assertThatThrownBy(() -> get(a, "/v1/nodes/node-a/devices", null)).as("TLS requires a client certificate")
                .isInstanceOf(IOException.class);

        http = HttpClient.newHttpClient();
        scheme = "http";
        assertThatThrownBy(() -> get(a, "/healthz", null)).as("no plain HTTP on the HTTPS port").isInstanceOf(IOException.class);
    }

    @Test
    void shouldAcceptEitherACertificateOrATokenWhenBothAreConfigured(@TempDir Path dir) throws Exception {
        Map<String, Object> settings = new HashMap<>(tlsSettings(true));
        settings.putAll(tokenFile(dir, TOKEN));
        startPair(settings, Map.of());

        useClient(false);
        assertThat(get(a, "/v1/nodes/node-b/devices", TOKEN).statusCode()).isEqualTo(200);
        error(get(a, "/v1/nodes/node-a/devices", null), 401);

        useClient(true);
        assertThat(get(a, "/v1/nodes/node-a/devices", null).statusCode()).isEqualTo(200);
    }

    @Test
    void shouldForbidACertificateOutsideTheAllowedPrincipals(@TempDir Path dir) throws Exception {
        Map<String, Object> settings = new HashMap<>(tlsSettings(true));
        settings.put(QuerySecurityConfig.ALLOWED_PRINCIPALS, "CN=someone-else,O=devhealth");
        startPair(settings, Map.of());

        useClient(true);
        assertThat(error(get(a, "/v1/nodes/node-a/devices", null), 403).get("message").asText()).contains("certificate");
    }

    private static Map<String, Object> allowing(String principals) {
        Map<String, Object> settings = new HashMap<>(tlsSettings(true));
        settings.put(QuerySecurityConfig.ALLOWED_PRINCIPALS, principals);
        return settings;
    }

    /** The instances' own certificate is not among the allowed principals: only the caller's identity can pass at the owner. */
    @Test
    void shouldKeepACertificateCallersIdentityWhenForwardingToTheOwner() throws Exception {
        startPair(allowing("CN=devhealth-client"), Map.of());

        useClient(true);
        HttpResponse<String> node = get(a, "/v1/nodes/node-b/devices", null);
        assertThat(node.statusCode()).as(node.body()).isEqualTo(200);
        assertThat(json.readTree(node.body()).get("node").asText()).as("the owner's answer").isEqualTo("node-b");
        HttpResponse<String> pod = get(a, "/v1/pods/ml/train-0/devices", null);
        assertThat(pod.statusCode()).as(pod.body()).isEqualTo(200);
        assertThat(json.readTree(pod.body()).get("node").asText()).isEqualTo("served-by-" + b.port());

        useClient(serverKeystore);
        error(get(b, "/v1/nodes/node-b/devices", null), 403);
    }

    /** Instance 1 lets any certificate of the truststore in, the owner (instance 2) only devhealth-client. */
    @Test
    void shouldRefuseACertificateCallerTheOwnerDoesNotAllowEvenThroughAPeer() throws Exception {
        startPair(QuerySecurityConfig.from(tlsSettings(true)), QuerySecurityConfig.from(allowing("CN=devhealth-client")));

        useClient(strangerKeystore);
        assertThat(get(a, "/v1/nodes/node-a/devices", null).statusCode()).as("instance 1 lets it in").isEqualTo(200);
        assertThat(error(get(a, "/v1/nodes/node-b/devices", null), 403).get("message").asText()).as("the owner's refusal")
                .contains("certificate");

        // What a peer sends when it forwards: the owner takes the caller it names through the same allowed principals.
        useClient(serverKeystore);
        error(get(b, "/v1/nodes/node-b/devices", null, AccessPolicy.CALLER_SUBJECT_HEADER, "CN=stranger,O=elsewhere"), 403);
        assertThat(get(b, "/v1/nodes/node-b/devices", null, AccessPolicy.CALLER_SUBJECT_HEADER, "CN=devhealth-client").statusCode())
                .isEqualTo(200);
        error(get(b, "/v1/nodes/node-b/devices", null, AccessPolicy.CALLER_SUBJECT_HEADER, "devhealth-client"), 400);
    }

    @Test
    void shouldRefuseACallerNamedByAnyoneButAPeer(@TempDir Path dir) throws Exception {
        Logger filter = (Logger) LoggerFactory.getLogger(AccessFilter.class);
        ListAppender<ILoggingEvent> logs = new ListAppender<>();
        logs.start();
        filter.addAppender(logs);
        try {
            Map<String, Object> settings = allowing("CN=devhealth-client");
            settings.putAll(tokenFile(dir, TOKEN));
            startPair(settings, Map.of());

            useClient(true);
            assertThat(error(get(a, "/v1/nodes/node-a/devices", null, AccessPolicy.CALLER_SUBJECT_HEADER, "CN=devhealth-client"), 403)
                    .get("message").asText()).as("an allowed certificate, but not a peer's").contains(AccessPolicy.CALLER_SUBJECT_HEADER);
            useClient(strangerKeystore);
            error(get(a, "/v1/nodes/node-a/devices", null, AccessPolicy.CALLER_SUBJECT_HEADER, "CN=devhealth-client"), 403);
            useClient(false);
            error(get(a, "/v1/nodes/node-a/devices", TOKEN, AccessPolicy.CALLER_SUBJECT_HEADER, "CN=devhealth-client"), 403);
        } finally {
            filter.detachAppender(logs);
        }
        assertThat(logs.list).extracting(ILoggingEvent::getFormattedMessage)
                .filteredOn(line -> line.contains("reason=caller-subject-from-non-peer")).hasSize(3).allSatisfy(line -> assertThat(line).doesNotContain(TOKEN));
    }

    @Test
    void shouldRefuseACallerNamedOverPlainHttp(@TempDir Path dir) throws Exception {
        startPair(tokenFileOverHttp(dir, TOKEN), Map.of());

        error(get(a, "/v1/nodes/node-a/devices", TOKEN, AccessPolicy.CALLER_SUBJECT_HEADER, "CN=devhealth-client"), 403);
        assertThat(get(a, "/v1/nodes/node-b/devices", TOKEN).statusCode()).as("a token caller forwarded names no one").isEqualTo(200);
    }

    /**
     * A holds neither the pod nor its verdict: it forwards to B, which holds the pod's node, and B asks C, which holds
     * the pod's verdict (pod-verdicts is keyed by pod). The caller's identity goes over both hops.
     */
    @Test
    void shouldKeepACertificateCallersIdentityOverTwoHops() throws Exception {
        QuerySecurityConfig security = QuerySecurityConfig.from(allowing("CN=devhealth-client"));
        a = QueryServer.bind("127.0.0.1", 0, clock, security);
        b = QueryServer.bind("127.0.0.1", 0, clock, security);
        QueryServer c = QueryServer.bind("127.0.0.1", 0, clock, security);
        servers.addAll(List.of(a, b, c));
        HostInfo hostA = new HostInfo("127.0.0.1", a.port());
        HostInfo hostB = new HostInfo("127.0.0.1", b.port());
        HostInfo hostC = new HostInfo("127.0.0.1", c.port());
        Map<String, HostInfo> owners = Map.of("node-a", hostA, "node-b", hostB);
        a.serve(new FakeCluster(hostA, owners, List.of(hostB, hostC), Set.of(), hostC, Set.of()), () -> "", new SimpleMeterRegistry());
        b.serve(new FakeCluster(hostB, owners, List.of(hostA, hostC), Set.of("ml/train-0"), hostC, Set.of()), () -> "",
                new SimpleMeterRegistry());
        c.serve(new FakeCluster(hostC, owners, List.of(hostA, hostB), Set.of(), hostC, Set.of("ml/train-0")), () -> "",
                new SimpleMeterRegistry());

        useClient(true);
        HttpResponse<String> pod = get(a, "/v1/pods/ml/train-0/devices", null);

        assertThat(pod.statusCode()).as(pod.body()).isEqualTo(200);
        JsonNode answer = json.readTree(pod.body());
        assertThat(answer.get("node").asText()).isEqualTo("served-by-" + b.port());
        assertThat(answer.path("verdict").path("message").asText()).as("the verdict, from the third instance")
                .isEqualTo("verdict-of-" + c.port());
    }
}
