package io.devhealth.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.devhealth.query.routing.StandbyReads;
import io.devhealth.simulators.kafka.KafkaSecurity;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code devhealth query} against a stand-in for the processor's query API that answers recorded documents. */
class QueryCommandTest {

    private static final String POD = """
            {"namespace":"ml","name":"train-0","node":"node-1","cluster":"","at":null,"version":3,
             "updatedAt":"2026-11-29T10:00:02Z","summary":"Unhealthy","containers":[{"name":"main","claims":[
             {"claimName":"train-0-gpu","claimNamespace":"ml","devices":[{"driver":"gpu.example.com","pool":"node-1",
             "device":"gpu-0","resourceId":"gpu.example.com/gpu=gpu-0","health":"Unhealthy","message":"XID 79: GPU has fallen off the bus",
             "reason":"XID-79","since":"2026-11-29T10:00:02Z"}]}]}]}""";
    private static final String PAGE_1 = """
            {"node":"node-1","driver":"gpu.example.com","pool":"node-1","device":"gpu-0","from":"1970-01-01T00:00:00Z",
             "to":"2026-11-29T11:00:00Z","items":[{"id":"a","at":"2026-11-29T10:00:01Z","from":"Unknown","to":"Healthy",
             "source":"DRA","reason":null,"message":"gpu.example.com (DRA) reports Healthy","severity":"INFO","affectedPods":[]}],
             "continue":"next-page"}""";
    private static final String PAGE_2 = """
            {"node":"node-1","driver":"gpu.example.com","pool":"node-1","device":"gpu-0","from":"1970-01-01T00:00:00Z",
             "to":"2026-11-29T11:00:00Z","items":[{"id":"b","at":"2026-11-29T10:00:02Z","from":"Healthy","to":"Unhealthy",
             "source":"DRA","reason":"XID-79","message":"gpu.example.com (DRA) reports Unhealthy (XID-79)","severity":"CRITICAL",
             "affectedPods":["ml/train-0"]}],"continue":null}""";

    private static final String TOKEN = "query-" + KafkaSecurity.randomSecret();
    private static final String FLEET = """
            {"from":"2026-11-29T09:00:00Z","to":"2026-11-29T15:00:00Z","window":"PT6H",
             "totals":{"toUnhealthy":3,"toUnknown":1,"toHealthy":2,"total":6},
             "dimensions":{"NODE":[{"key":"node-1","toUnhealthy":2,"toUnknown":0,"toHealthy":1,"total":3},
                                   {"key":"node-2","toUnhealthy":1,"toUnknown":1,"toHealthy":1,"total":3}],
                           "DRIVER":[{"key":"gpu.nvidia.com","toUnhealthy":3,"toUnknown":1,"toHealthy":2,"total":6}],
                           "PRODUCT":[{"key":"NVIDIA H100 80GB HBM3","toUnhealthy":3,"toUnknown":1,"toHealthy":2,"total":6}],
                           "REASON":[{"key":"XID-79","toUnhealthy":3,"toUnknown":0,"toHealthy":0,"total":3}]},
             "verdicts":{"NODE":[{"key":"node-1","deviceFailure":2,"noDeviceFailure":5,"unknown":0,"total":7},
                                 {"key":"node-2","deviceFailure":0,"noDeviceFailure":1,"unknown":1,"total":2}],
                         "PRODUCT":[{"key":"NVIDIA H100 80GB HBM3","deviceFailure":2,"noDeviceFailure":6,"unknown":1,"total":9}]}}""";

    private HttpServer server;
    private String scheme = "http";
    private volatile String requiredToken;
    private Map<String, String> environment = Map.of();
    private final Map<String, String> answers = new ConcurrentHashMap<>();
    /** How many requests get 503 first (a processor still starting). */
    private final java.util.concurrent.atomic.AtomicInteger unavailable = new java.util.concurrent.atomic.AtomicInteger();
    private final List<String> requested = new CopyOnWriteArrayList<>();
    private final List<String> authorizations = new CopyOnWriteArrayList<>();
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    /** Whether the server marks its answers as a standby copy's. */
    private volatile boolean stale;

    @BeforeEach
    void startServer() throws IOException {
        startServer(HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0));
    }

    private void startServer(HttpServer created) {
        server = created;
        server.createContext("/", exchange -> {
            String uri = exchange.getRequestURI().toString();
            requested.add(uri);
            String authorization = exchange.getRequestHeaders().getFirst("Authorization");
            authorizations.add(authorization == null ? "" : authorization);
            if (requiredToken != null && !("Bearer " + requiredToken).equals(authorization)) {
                byte[] refused = "{\"status\":401,\"message\":\"invalid bearer token\"}".getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"devhealth\"");
                exchange.sendResponseHeaders(401, refused.length);
                try (OutputStream body = exchange.getResponseBody()) {
                    body.write(refused);
                }
                return;
            }
            if (unavailable.getAndDecrement() > 0) {
                byte[] retry = "{\"status\":503,\"message\":\"retry shortly\"}".getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(503, retry.length);
                try (OutputStream body = exchange.getResponseBody()) {
                    body.write(retry);
                }
                return;
            }
            String body = answers.get(uri);
            int status = body == null ? 404 : 200;
            byte[] bytes = (body == null ? "{\"status\":404,\"message\":\"no pod ml/gone\"}" : body).getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            if (stale) {
                exchange.getResponseHeaders().set(StandbyReads.STALE_HEADER, "true");
            }
            exchange.sendResponseHeaders(status, bytes.length);
            try (OutputStream body2 = exchange.getResponseBody()) {
                body2.write(bytes);
            }
        });
        server.start();
    }

    @AfterEach
    void stopServer() {
        server.stop(0);
    }

    private int run(String... args) {
        CommandLine cli = Devhealth.commandLine();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        ((QueryCommand) cli.getSubcommands().get("query").getCommand()).env = environment;
        String[] full = new String[args.length + 3];
        full[0] = "query";
        full[1] = "--server";
        full[2] = scheme + "://127.0.0.1:" + server.getAddress().getPort();
        System.arraycopy(args, 0, full, 3, args.length);
        return cli.execute(full);
    }

    @Test
    void shouldPrintAPodsDevicesAsATable() {
        answers.put("/v1/pods/ml/train-0/devices", POD);

        assertThat(run("pod", "ml/train-0")).isZero();

        assertThat(out.toString()).contains("Pod ml/train-0 on node node-1: Unhealthy")
                .containsPattern("CONTAINER\\s+CLAIM\\s+DEVICE\\s+HEALTH")
                .containsPattern("main\\s+train-0-gpu\\s+gpu.example.com/node-1/gpu-0\\s+Unhealthy\\s+2026-11-29T10:00:02Z\\s+XID-79\\s+XID 79");
    }

    @Test
    void shouldSayOnStderrWhenAStandbyCopyAnswered() {
        answers.put("/v1/pods/ml/train-0/devices", POD);
        stale = true;

        assertThat(run("pod", "ml/train-0")).isZero();

        assertThat(out.toString()).contains("Pod ml/train-0 on node node-1: Unhealthy").doesNotContain("standby");
        assertThat(err.toString()).contains("answered from a standby copy").contains("may lack the latest changes");
    }

    @Test
    void shouldAskForThePodAsOfAnRfc3339TimeAndPrintJson() throws Exception {
        answers.put("/v1/pods/ml/train-0/devices?at=2026-11-29T09%3A00%3A01Z", POD);

        assertThat(run("pod", "ml/train-0", "--at", "2026-11-29T10:00:01+01:00", "-o", "json")).isZero();

        assertThat(new com.fasterxml.jackson.databind.ObjectMapper().readTree(out.toString()).get("summary").asText()).isEqualTo("Unhealthy");
    }

    @Test
    void shouldFollowContinueTokensThroughADevicesHistory() {
        String path = "/v1/devices/node-1/gpu.example.com/node-1/gpu-0/history?limit=1000";
        answers.put(path, PAGE_1);
        answers.put(path + "&continue=next-page", PAGE_2);

        assertThat(run("device", "node-1/gpu.example.com/node-1/gpu-0")).isZero();

        assertThat(out.toString()).contains("2 transition(s)")
                .containsPattern("2026-11-29T10:00:01Z\\s+Unknown\\s+Healthy\\s+DRA\\s+-\\s+-")
                .containsPattern("2026-11-29T10:00:02Z\\s+Healthy\\s+Unhealthy\\s+DRA\\s+XID-79\\s+ml/train-0");
        assertThat(requested).hasSize(2);
    }

    @Test
    void shouldPrintTheFleetSummaryPerDimensionCutToTop() {
        answers.put("/v1/fleet/summary?window=6h", FLEET);

        assertThat(run("fleet", "--window", "6h", "--top", "1")).isZero();

        assertThat(out.toString()).contains("3 to Unhealthy, 1 to Unknown, 2 to Healthy")
                .containsPattern("DIMENSION\\s+VALUE\\s+TO-UNHEALTHY")
                .containsPattern("NODE\\s+node-1\\s+2\\s+0\\s+1\\s+3")
                .containsPattern("PRODUCT\\s+NVIDIA H100 80GB HBM3\\s+3")
                .containsPattern("REASON\\s+XID-79\\s+3")
                .containsPattern("DIMENSION\\s+VALUE\\s+DEVICE-FAILURE\\s+NO-DEVICE-FAILURE\\s+UNKNOWN\\s+TOTAL")
                .containsPattern("NODE\\s+node-1\\s+2\\s+5\\s+0\\s+7")
                .containsPattern("PRODUCT\\s+NVIDIA H100 80GB HBM3\\s+2\\s+6\\s+1\\s+9")
                .doesNotContain("node-2");
    }

    /** The collector's init step: waits while the processor says 503, then writes the key owner-only, and never prints it. */
    @Test
    void shouldFetchTheNodeKeyIntoAnOwnerOnlyFileOnceTheProcessorAnswers(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        String credential = "v1:0123456789abcdef:node-1:" + "a".repeat(43);
        answers.put("/v1/node-key", "{\"node\":\"node-1\",\"keyId\":\"0123456789abcdef\",\"credential\":\"" + credential + "\"}");
        unavailable.set(2);
        Path token = dir.resolve("token");
        Files.writeString(token, TOKEN + "\n");
        requiredToken = TOKEN;
        Path out = dir.resolve("node-key");

        assertThat(run("--token-file", token.toString(), "node-key", "--out", out.toString(), "--wait", "30s")).isZero();

        assertThat(Files.readString(out).strip()).isEqualTo(credential);
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(out))).isEqualTo("rw-------");
        assertThat(requested).hasSize(3);
        assertThat(this.out.toString()).contains("node key of node-1 written").doesNotContain(credential);
    }

    @Test
    void shouldStopAtOnceWhenTheProcessorRefusesTheToken(@org.junit.jupiter.api.io.TempDir Path dir) {
        requiredToken = TOKEN;
        Path out = dir.resolve("node-key");

        assertThat(run("--token", "wrong", "node-key", "--out", out.toString(), "--wait", "30s")).isEqualTo(4);

        assertThat(requested).hasSize(1);
        assertThat(Files.exists(out)).isFalse();
    }

    @Test
    void shouldPrintATerminatedPodsVerdict() {
        answers.put("/v1/pods/ml/train-0/devices", POD.substring(0, POD.lastIndexOf('}'))
                + ",\"verdict\":{\"verdict\":\"DeviceFailure\",\"uid\":\"u-1\",\"phase\":\"Failed\","
                + "\"finishedAt\":\"2026-11-29T10:00:03Z\",\"recordedAt\":\"2026-11-29T10:02:03Z\",\"message\":\"gpu-0 Unhealthy: XID 79\"}}");

        assertThat(run("pod", "ml/train-0")).isZero();

        assertThat(out.toString()).contains("Verdict: DeviceFailure (Failed, finished 2026-11-29T10:00:03Z, final 2026-11-29T10:02:03Z): "
                + "gpu-0 Unhealthy: XID 79");
    }

    @Test
    void shouldAskForTheDefaultFleetWindowAndPrintJson() throws Exception {
        answers.put("/v1/fleet/summary?window=1h", FLEET);

        assertThat(run("fleet", "-o", "json")).isZero();

        assertThat(new com.fasterxml.jackson.databind.ObjectMapper().readTree(out.toString()).get("totals").get("total").asLong())
                .isEqualTo(6);
    }

    @Test
    void shouldSayWhatWasNotFoundAndExitWithOne() {
        assertThat(run("pod", "ml/gone")).isEqualTo(1);

        assertThat(err.toString()).contains("error: no pod ml/gone");
        assertThat(out.toString()).isEmpty();
    }

    @Test
    void shouldRejectMalformedArgumentsWithoutAsking() {
        assertThat(run("pod", "just-a-name")).isEqualTo(2);
        assertThat(run("device", "node-1/gpu-0")).isEqualTo(2);
        assertThat(run("pod", "ml/train-0", "--at", "yesterday")).isEqualTo(2);

        assertThat(err.toString()).contains("NAMESPACE/NAME").contains("NODE/DRIVER/POOL/DEVICE").contains("RFC 3339");
        assertThat(requested).isEmpty();
    }

    @Test
    void shouldExplainAnUnreachableServer() throws IOException {
        int closedPort;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        CommandLine cli = Devhealth.commandLine();
        cli.setErr(new PrintWriter(err, true));

        assertThat(cli.execute("query", "--server", "http://127.0.0.1:" + closedPort, "node", "node-1")).isEqualTo(3);
        assertThat(err.toString()).contains("cannot reach the query API");
    }

    @Test
    void shouldSendTheBearerTokenFromTheOptionTheFileOrTheEnvironment(@TempDir Path dir) throws IOException {
        answers.put("/v1/pods/ml/train-0/devices", POD);
        requiredToken = TOKEN;
        Path file = Files.writeString(dir.resolve("token"), "# the query token\n" + TOKEN + "\n");

        assertThat(run("pod", "ml/train-0", "--token", TOKEN)).isZero();
        assertThat(run("pod", "ml/train-0", "--token-file", file.toString())).isZero();
        environment = Map.of(QueryCommand.TOKEN_ENV, TOKEN);
        assertThat(run("pod", "ml/train-0")).isZero();

        assertThat(authorizations).containsOnly("Bearer " + TOKEN).hasSize(3);
        assertThat(out.toString()).doesNotContain(TOKEN);
    }

    @Test
    void shouldExplainARefusalWithoutPrintingTheToken() {
        requiredToken = TOKEN;
        String wrong = "wrong-" + KafkaSecurity.randomSecret();

        assertThat(run("node", "node-1")).isEqualTo(4);
        assertThat(err.toString()).contains("invalid bearer token").contains("no token was given");
        assertThat(run("node", "node-1", "--token", wrong)).isEqualTo(4);
        assertThat(err.toString()).contains("the token was refused").doesNotContain(wrong);
        assertThat(out.toString()).doesNotContain(wrong);
    }

    @Test
    void shouldRejectAnEmptyTokenFileWithoutAsking(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("token"), "# nothing here\n");

        assertThat(run("node", "node-1", "--token-file", file.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("holds no token");
        assertThat(requested).isEmpty();
    }

    @Test
    void shouldTrustAnHttpsServerThroughCacert(@TempDir Path dir) throws Exception {
        KafkaSecurity tls = KafkaSecurity.create(dir);
        char[] password = tls.brokerOverrides().get("ssl.keystore.password").toCharArray();
        KeyStore keystore = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(dir.resolve("broker.p12"))) {
            keystore.load(in, password);
        }
        KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(keystore, password);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keys.getKeyManagers(), null, null);
        server.stop(0);
        HttpsServer https = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        https.setHttpsConfigurator(new HttpsConfigurator(context));
        startServer(https);
        scheme = "https";
        answers.put("/v1/pods/ml/train-0/devices", POD);

        assertThat(run("pod", "ml/train-0")).as("the test CA is not one the JDK trusts").isEqualTo(3);
        assertThat(err.toString()).contains("--cacert");
        assertThat(run("pod", "ml/train-0", "--cacert", dir.resolve("broker.crt").toString())).isZero();
        assertThat(out.toString()).contains("Pod ml/train-0 on node node-1: Unhealthy");
    }
}
