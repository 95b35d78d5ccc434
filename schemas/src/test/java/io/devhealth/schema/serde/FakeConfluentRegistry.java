package io.devhealth.schema.serde;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaCompatibility.SchemaCompatibilityType;

/**
 * A fake of the Confluent-compatible endpoints the client uses, on the JDK's HTTP server, bound to
 * 127.0.0.1 on a free port. Answers are shaped like the ones recorded from Apicurio 3.3.3's
 * {@code /apis/ccompat/v7}: {@code {"id":1}}, {@code {"schema":…}},
 * {@code {"error_code":40403,…}} and {@code {"error_code":409,…}}.
 *
 * <p>Compatibility is judged with Avro's own {@link SchemaCompatibility}, BACKWARD only, against the
 * latest version: enough to produce a 409.
 */
final class FakeConfluentRegistry implements AutoCloseable {

    /** One request as the fake saw it. */
    record Request(String method, String path, Map<String, List<String>> headers, String body) {
        String header(String name) {
            return headers.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(name))
                    .map(e -> e.getValue().get(0)).findFirst().orElse(null);
        }
    }

    private final ObjectMapper json = new ObjectMapper();
    private final HttpServer server;
    private final ExecutorService executor = Executors.newCachedThreadPool();
    private final List<Request> requests = new CopyOnWriteArrayList<>();
    private final Map<String, Integer> idsByContent = new HashMap<>();
    private final Map<Integer, String> contentById = new HashMap<>();
    private final Map<String, List<Integer>> idsBySubject = new HashMap<>();
    private final Map<String, String> compatibilityBySubject = new HashMap<>();
    private volatile String requiredAuthorization;
    private volatile int failNextWithStatus;
    private volatile Duration delay = Duration.ZERO;

    FakeConfluentRegistry() throws IOException {
        this(HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0));
    }

    /**
     * The same fake over HTTPS with {@code tls} (the server's key and the CAs it trusts for client
     * certificates); with {@code requireClientCertificate}, a client without a certificate that
     * {@code tls} trusts fails the handshake. Only to check what the client sends in a handshake:
     * a real registry over HTTPS is in {@code ApicurioHttpsRegistryIT}.
     */
    static FakeConfluentRegistry https(SSLContext tls, boolean requireClientCertificate) throws IOException {
        HttpsServer server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setHttpsConfigurator(new HttpsConfigurator(tls) {
            @Override
            public void configure(HttpsParameters params) {
                SSLParameters parameters = tls.getDefaultSSLParameters();
                parameters.setNeedClientAuth(requireClientCertificate);
                params.setSSLParameters(parameters);
            }
        });
        return new FakeConfluentRegistry(server);
    }

    private FakeConfluentRegistry(HttpServer server) {
        this.server = server;
        server.createContext("/apis/ccompat/v7/", this::handle);
        server.setExecutor(executor);
        server.start();
    }

    String url() {
        String scheme = server instanceof HttpsServer ? "https" : "http";
        return scheme + "://127.0.0.1:" + server.getAddress().getPort() + "/apis/ccompat/v7";
    }

    List<Request> requests() {
        return requests;
    }

    /** Answers 401 unless the Authorization header equals {@code value}. */
    void requireAuthorization(String value) {
        this.requiredAuthorization = value;
    }

    /** The next request gets {@code status} with a plain-text body. */
    void failNextWith(int status) {
        this.failNextWithStatus = status;
    }

    void delayAnswers(Duration newDelay) {
        this.delay = newDelay;
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            String path = exchange.getRequestURI().getRawPath().substring("/apis/ccompat/v7".length());
            requests.add(new Request(exchange.getRequestMethod(), path, Map.copyOf(exchange.getRequestHeaders()), body));
            if (!delay.isZero()) {
                sleep(delay);
            }
            int failure = failNextWithStatus;
            if (failure != 0) {
                failNextWithStatus = 0;
                send(exchange, failure, "text/plain", "upstream exploded");
                return;
            }
            String auth = requiredAuthorization;
            if (auth != null && !auth.equals(exchange.getRequestHeaders().getFirst("Authorization"))) {
                error(exchange, 401, 40101, "Unauthorized");
                return;
            }
            route(exchange, exchange.getRequestMethod(), path.split("/"), body);
        }
    }

    private synchronized void route(HttpExchange exchange, String method, String[] segments, String body) throws IOException {
        // segments[0] is "" because the path starts with "/".
        if (method.equals("POST") && segments.length == 4 && segments[1].equals("subjects") && segments[3].equals("versions")) {
            register(exchange, decode(segments[2]), schemaOf(body));
        } else if (method.equals("POST") && segments.length == 3 && segments[1].equals("subjects")) {
            lookup(exchange, decode(segments[2]), schemaOf(body));
        } else if (method.equals("GET") && segments.length == 4 && segments[1].equals("schemas") && segments[2].equals("ids")) {
            String content = contentById.get(Integer.parseInt(segments[3]));
            if (content == null) {
                error(exchange, 404, 40403, "No content with id: " + segments[3]);
            } else {
                ok(exchange, json.createObjectNode().put("schema", content));
            }
        } else if (method.equals("POST") && segments.length == 6 && segments[1].equals("compatibility")) {
            List<Integer> versions = idsBySubject.get(decode(segments[3]));
            if (versions == null) {
                error(exchange, 404, 40401, "Subject not found");
            } else {
                ok(exchange, json.createObjectNode().put("is_compatible", compatible(decode(segments[3]), schemaOf(body))));
            }
        } else if (method.equals("PUT") && segments.length == 3 && segments[1].equals("config")) {
            String level = json.readTree(body).path("compatibility").asText();
            compatibilityBySubject.put(decode(segments[2]), level);
            ok(exchange, json.createObjectNode().put("compatibility", level));
        } else {
            error(exchange, 404, 404, "No route " + method + " " + String.join("/", segments));
        }
    }

    private void register(HttpExchange exchange, String subject, String content) throws IOException {
        List<Integer> versions = idsBySubject.computeIfAbsent(subject, s -> new ArrayList<>());
        Integer existing = idsByContent.get(content);
        if (existing != null && versions.contains(existing)) {
            ok(exchange, json.createObjectNode().put("id", existing));
            return;
        }
        if (!compatible(subject, content)) {
            error(exchange, 409, 409, "Incompatible artifact: " + subject + " [AVRO], num of incompatible diffs: {1}");
            return;
        }
        int id = existing != null ? existing : idsByContent.size() + 1;
        idsByContent.put(content, id);
        contentById.put(id, content);
        versions.add(id);
        ok(exchange, json.createObjectNode().put("id", id));
    }

    private void lookup(HttpExchange exchange, String subject, String content) throws IOException {
        List<Integer> versions = idsBySubject.get(subject);
        Integer id = idsByContent.get(content);
        if (versions == null) {
            error(exchange, 404, 40401, "Subject not found");
        } else if (id == null || !versions.contains(id)) {
            error(exchange, 404, 40403, "Schema not found");
        } else {
            ok(exchange, json.createObjectNode().put("subject", subject).put("version", versions.indexOf(id) + 1)
                    .put("id", id).put("schema", content));
        }
    }

    private boolean compatible(String subject, String content) {
        List<Integer> versions = idsBySubject.getOrDefault(subject, List.of());
        if (!"BACKWARD".equals(compatibilityBySubject.get(subject)) || versions.isEmpty()) {
            return true;
        }
        Schema latest = new Schema.Parser().parse(contentById.get(versions.get(versions.size() - 1)));
        Schema candidate = new Schema.Parser().parse(content);
        return SchemaCompatibility.checkReaderWriterCompatibility(candidate, latest).getType()
                == SchemaCompatibilityType.COMPATIBLE;
    }

    private String schemaOf(String body) throws IOException {
        JsonNode schema = json.readTree(body).get("schema");
        // Normalise as a registry does, so that formatting does not change the id.
        return new Schema.Parser().parse(schema.asText()).toString();
    }

    private void ok(HttpExchange exchange, ObjectNode answer) throws IOException {
        send(exchange, 200, ConfluentCompatSchemaRegistryClient.CONTENT_TYPE, json.writeValueAsString(answer));
    }

    private void error(HttpExchange exchange, int status, int errorCode, String message) throws IOException {
        send(exchange, status, ConfluentCompatSchemaRegistryClient.CONTENT_TYPE,
                json.writeValueAsString(json.createObjectNode().put("error_code", errorCode).put("message", message)));
    }

    private static void send(HttpExchange exchange, int status, String contentType, String text) throws IOException {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", contentType);
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
    }

    private static String decode(String segment) {
        return URLDecoder.decode(segment, StandardCharsets.UTF_8);
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
