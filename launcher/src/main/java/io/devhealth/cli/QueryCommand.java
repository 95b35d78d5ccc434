package io.devhealth.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.devhealth.query.routing.StandbyReads;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManagerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.ScopeType;

/**
 * {@code devhealth query}: the post-mortem questions, asked of the stream-processor's query API.
 * Readable tables by default, the API's JSON with {@code -o json}.
 *
 * <p>Credentials: a bearer token from {@code --token}, {@code --token-file} or {@code DEVHEALTH_QUERY_TOKEN}
 * (in that order), never printed, also not in error messages; {@code --cacert} trusts the CA of an
 * HTTPS query API. Exit codes: 0 found, 1 not found, 2 bad arguments, 3 server unreachable or failing,
 * 4 credentials missing or refused.
 */
@Command(name = "query", mixinStandardHelpOptions = true,
        description = "Ask the stream-processor which device failed under which pod, and when.",
        subcommands = {QueryCommand.Pod.class, QueryCommand.Device.class, QueryCommand.Node.class, QueryCommand.Fleet.class,
                QueryCommand.NodeKey.class})
public final class QueryCommand implements Runnable {

    /** Where the processor's query API listens unless --server or DEVHEALTH_QUERY_SERVER says otherwise. */
    public static final String DEFAULT_SERVER = "http://localhost:8080";
    /** The environment variable with the bearer token (the safest way to pass it: not in the process list). */
    public static final String TOKEN_ENV = "DEVHEALTH_QUERY_TOKEN";

    enum Output { table, json }

    @Option(names = "--server", scope = ScopeType.INHERIT, paramLabel = "URL",
            defaultValue = "${env:DEVHEALTH_QUERY_SERVER:-" + DEFAULT_SERVER + "}",
            description = "Query API of any stream-processor instance (env DEVHEALTH_QUERY_SERVER; default: " + DEFAULT_SERVER + ").")
    String server;

    @Option(names = {"-o", "--output"}, scope = ScopeType.INHERIT, defaultValue = "table",
            description = "Output format: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
    Output output;

    @Option(names = "--token", scope = ScopeType.INHERIT, paramLabel = "TOKEN",
            description = "Bearer token for the query API (visible in the process list: prefer --token-file or env " + TOKEN_ENV + ").")
    String token;

    @Option(names = "--token-file", scope = ScopeType.INHERIT, paramLabel = "FILE",
            description = "File whose first line (not starting with '#') is the bearer token.")
    Path tokenFile;

    @Option(names = "--cacert", scope = ScopeType.INHERIT, paramLabel = "PEM",
            description = "PEM file of the CA certificate(s) that signed an HTTPS query API's certificate (default: the JDK's CAs).")
    Path cacert;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** The environment, replaceable in tests. */
    Map<String, String> env = System.getenv();

    private final ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private HttpClient http;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** A failed query: the message for the user and the exit code. */
    static final class QueryFailed extends Exception {
        private static final long serialVersionUID = 1L;
        final int exitCode;

        QueryFailed(String message, int exitCode) {
            super(message);
            this.exitCode = exitCode;
        }
    }

    JsonNode get(String path) throws QueryFailed {
        URI uri = URI.create(server.replaceAll("/+$", "") + path);
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).GET();
        String bearer = bearerToken();
        if (bearer != null) {
            request.header("Authorization", "Bearer " + bearer);
        }
        HttpResponse<String> response;
        try {
            response = client().send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (ConnectException e) {
            throw new QueryFailed("cannot reach the query API at " + server + " (set --server or DEVHEALTH_QUERY_SERVER)", 3);
        } catch (SSLException e) {
            throw new QueryFailed("TLS with " + server + " failed (" + e.getClass().getSimpleName()
                    + "): is the server's CA given with --cacert, and does the server want a client certificate?", 3);
        } catch (IOException e) {
            throw new QueryFailed("query to " + uri + " failed: " + e.getClass().getSimpleName(), 3);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new QueryFailed("interrupted", 3);
        }
        JsonNode body;
        try {
            body = json.readTree(response.body());
        } catch (IOException e) {
            throw new QueryFailed("the server at " + server + " answered " + response.statusCode() + " without JSON", 3);
        }
        if (response.statusCode() == 401 || response.statusCode() == 403) {
            // The server's message never holds the token; ours neither.
            String hint = bearer == null ? "no token was given: set --token-file, --token or " + TOKEN_ENV
                    : response.statusCode() == 403 && body.has("missing")
                            ? "the token's user lacks that permission in Kubernetes RBAC"
                            : "the token was refused (expired, rotated, or issued for another audience than devhealth-query?)";
            throw new QueryFailed(body.path("message").asText("HTTP " + response.statusCode()) + "; " + hint, 4);
        }
        if (response.statusCode() != 200) {
            String message = body.path("message").asText("HTTP " + response.statusCode());
            throw new QueryFailed(message, response.statusCode() == 404 ? 1 : response.statusCode() == 400 ? 2 : 3);
        }
        if (response.headers().firstValue(StandbyReads.STALE_HEADER).isPresent()) {
            // On stderr, so that the JSON on stdout stays what the server answered.
            spec.commandLine().getErr().println("note: answered from a standby copy (the instance holding it cannot answer now): "
                    + "it may lack the latest changes");
        }
        return body;
    }

    /** The bearer token: --token, else --token-file, else DEVHEALTH_QUERY_TOKEN; null for none. */
    String bearerToken() throws QueryFailed {
        if (token != null && !token.isBlank()) {
            return token.strip();
        }
        if (tokenFile != null) {
            try {
                for (String line : Files.readAllLines(tokenFile, StandardCharsets.UTF_8)) {
                    String candidate = line.strip();
                    if (!candidate.isEmpty() && !candidate.startsWith("#")) {
                        return candidate;
                    }
                }
            } catch (IOException e) {
                throw new QueryFailed("cannot read --token-file " + tokenFile + " (" + e.getClass().getSimpleName() + ")", 2);
            }
            throw new QueryFailed("--token-file " + tokenFile + " holds no token", 2);
        }
        String fromEnv = env.get(TOKEN_ENV);
        return fromEnv == null || fromEnv.isBlank() ? null : fromEnv.strip();
    }

    private HttpClient client() throws QueryFailed {
        if (http == null) {
            HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5));
            if (cacert != null) {
                builder.sslContext(trusting(cacert));
            }
            http = builder.build();
        }
        return http;
    }

    /** An SSL context that trusts exactly the certificates in {@code pem}. */
    static SSLContext trusting(Path pem) throws QueryFailed {
        try (InputStream in = Files.newInputStream(pem)) {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            int i = 0;
            for (Certificate certificate : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                store.setCertificateEntry("ca-" + i++, certificate);
            }
            if (i == 0) {
                throw new QueryFailed("--cacert " + pem + " holds no certificate", 2);
            }
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(store);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trust.getTrustManagers(), null);
            return context;
        } catch (IOException | GeneralSecurityException e) {
            throw new QueryFailed("cannot read --cacert " + pem + " (" + e.getClass().getSimpleName() + ")", 2);
        }
    }

    static String segment(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    static String time(String value, String option) {
        try {
            return OffsetDateTime.parse(value).toInstant().toString();
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(option + " must be an RFC 3339 time such as 2026-11-29T10:00:00Z, got '" + value + "'");
        }
    }

    /** Shared by the subcommands: run the query, print, and map failures to exit codes. */
    abstract static class Query implements Callable<Integer> {

        @ParentCommand
        QueryCommand parent;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        abstract void query(PrintWriter out) throws QueryFailed;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            try {
                query(out);
                out.flush();
                return 0;
            } catch (QueryFailed e) {
                spec.commandLine().getErr().println("error: " + e.getMessage());
                return e.exitCode;
            } catch (IllegalArgumentException e) {
                spec.commandLine().getErr().println("error: " + e.getMessage());
                return 2;
            }
        }

        void printJson(PrintWriter out, Object value) {
            try {
                out.println(parent.json.writeValueAsString(value));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    @Command(name = "pod", mixinStandardHelpOptions = true,
            description = "Device health of a pod's containers, now or as of a time (also after the pod ended).")
    static final class Pod extends Query {

        @Parameters(paramLabel = "NAMESPACE/NAME", description = "The pod.")
        String pod;

        @Option(names = "--at", paramLabel = "RFC3339", description = "As of this time (default: the latest; for a pod that ended, its health as it ended and the "
                        + "failures reported within the termination window after).")
        String at;

        @Override
        void query(PrintWriter out) throws QueryFailed {
            String[] parts = pod.split("/", -1);
            if (parts.length != 2 || parts[0].isEmpty() || parts[1].isEmpty()) {
                throw new IllegalArgumentException("expected NAMESPACE/NAME, got '" + pod + "'");
            }
            String query = at == null ? "" : "?at=" + segment(time(at, "--at"));
            JsonNode status = parent.get("/v1/pods/" + segment(parts[0]) + "/" + segment(parts[1]) + "/devices" + query);
            if (parent.output == Output.json) {
                printJson(out, status);
                return;
            }
            out.printf("Pod %s/%s on node %s: %s (status version %s, updated %s%s)%n", status.path("namespace").asText(),
                    status.path("name").asText(), status.path("node").asText(), status.path("summary").asText(),
                    status.path("version").asText(), status.path("updatedAt").asText(),
                    status.path("at").isNull() || status.path("at").isMissingNode() ? "" : ", as of " + status.path("at").asText());
            JsonNode verdict = status.path("verdict");
            if (verdict.isObject()) {
                // "Infrastructure or application?", as the pod's post-mortem record says once it is final.
                out.printf("Verdict: %s (%s, finished %s, final %s): %s%n", verdict.path("verdict").asText(), text(verdict, "phase"),
                        text(verdict, "finishedAt"), text(verdict, "recordedAt"), text(verdict, "message"));
            }
            Table table = new Table("CONTAINER", "CLAIM", "DEVICE", "HEALTH", "SINCE", "REASON", "MESSAGE");
            for (JsonNode container : status.path("containers")) {
                for (JsonNode claim : container.path("claims")) {
                    for (JsonNode device : claim.path("devices")) {
                        table.row(container.path("name").asText(), claim.path("claimName").asText(),
                                device.path("driver").asText() + "/" + device.path("pool").asText() + "/" + device.path("device").asText(),
                                device.path("health").asText(), device.path("since").asText(), text(device, "reason"), text(device, "message"));
                    }
                }
            }
            table.print(out);
        }
    }

    @Command(name = "device", mixinStandardHelpOptions = true, description = "Every health transition of a device in a time range.")
    static final class Device extends Query {

        @Parameters(paramLabel = "NODE/DRIVER/POOL/DEVICE", description = "The device (the pool may contain '/').")
        String device;

        @Option(names = "--from", paramLabel = "RFC3339", description = "Start of the range (default: the start of the kept history).")
        String from;

        @Option(names = "--to", paramLabel = "RFC3339", description = "End of the range (default: now).")
        String to;

        @Option(names = "--limit", defaultValue = "1000", description = "At most this many transitions (default: ${DEFAULT-VALUE}).")
        int limit;

        @Override
        void query(PrintWriter out) throws QueryFailed {
            String[] parts = device.split("/", -1);
            if (parts.length < 4 || Arrays.stream(parts).anyMatch(String::isEmpty)) {
                throw new IllegalArgumentException("expected NODE/DRIVER/POOL/DEVICE, got '" + device + "'");
            }
            if (limit < 1) {
                throw new IllegalArgumentException("--limit must be at least 1");
            }
            StringBuilder path = new StringBuilder("/v1/devices");
            for (String part : parts) {
                path.append('/').append(segment(part));
            }
            path.append("/history?limit=").append(Math.min(limit, 1000));
            if (from != null) {
                path.append("&from=").append(segment(time(from, "--from")));
            }
            if (to != null) {
                path.append("&to=").append(segment(time(to, "--to")));
            }
            List<JsonNode> items = new ArrayList<>();
            JsonNode page = parent.get(path.toString());
            page.path("items").forEach(items::add);
            // Follow the server's continue tokens until the limit or the end of the range.
            while (items.size() < limit && page.hasNonNull("continue")) {
                page = parent.get(path + "&continue=" + segment(page.get("continue").asText()));
                page.path("items").forEach(items::add);
            }
            List<JsonNode> shown = items.subList(0, Math.min(limit, items.size()));
            if (parent.output == Output.json) {
                printJson(out, shown);
                return;
            }
            out.printf("Device %s: %d transition(s)%n", device, shown.size());
            Table table = new Table("AT", "FROM", "TO", "SOURCE", "REASON", "PODS", "MESSAGE");
            for (JsonNode t : shown) {
                List<String> pods = new ArrayList<>();
                t.path("affectedPods").forEach(p -> pods.add(p.asText()));
                table.row(t.path("at").asText(), t.path("from").asText(), t.path("to").asText(), t.path("source").asText(),
                        text(t, "reason"), pods.isEmpty() ? "-" : String.join(",", pods), text(t, "message"));
            }
            table.print(out);
        }
    }

    @Command(name = "node", mixinStandardHelpOptions = true, description = "Every device of a node with its health and each source's latest word.")
    static final class Node extends Query {

        @Parameters(paramLabel = "NODE", description = "The node name.")
        String node;

        @Override
        void query(PrintWriter out) throws QueryFailed {
            String path = "/v1/nodes/" + segment(node) + "/devices?limit=1000";
            List<JsonNode> items = new ArrayList<>();
            JsonNode page = parent.get(path);
            page.path("items").forEach(items::add);
            while (page.hasNonNull("continue")) {
                page = parent.get(path + "&continue=" + segment(page.get("continue").asText()));
                page.path("items").forEach(items::add);
            }
            if (parent.output == Output.json) {
                printJson(out, items);
                return;
            }
            out.printf("Node %s: %d device(s)%n", node, items.size());
            Table table = new Table("DEVICE", "HEALTH", "SINCE", "REASON", "SOURCES", "MESSAGE");
            for (JsonNode device : items) {
                List<String> sources = new ArrayList<>();
                device.path("sources").forEach(s -> sources.add(s.path("name").asText() + "=" + s.path("health").asText()));
                table.row(device.path("driver").asText() + "/" + device.path("pool").asText() + "/" + device.path("device").asText(),
                        device.path("health").asText(), text(device, "since"), text(device, "reason"), String.join(",", sources),
                        text(device, "message"));
            }
            table.print(out);
        }
    }

    @Command(name = "fleet", mixinStandardHelpOptions = true,
            description = "Health transitions counted per node, driver, GPU product and reason over a recent window.")
    static final class Fleet extends Query {

        @Option(names = "--window", defaultValue = "1h", paramLabel = "DURATION",
                description = "How far back: 30s, 15m, 6h, 7d or ISO-8601 such as PT90M (default: ${DEFAULT-VALUE}).")
        String window;

        @Option(names = "--top", defaultValue = "10", description = "Rows per dimension, most transitions to Unhealthy first (default: ${DEFAULT-VALUE}).")
        int top;

        @Override
        void query(PrintWriter out) throws QueryFailed {
            if (top < 1) {
                throw new IllegalArgumentException("--top must be at least 1");
            }
            JsonNode summary = parent.get("/v1/fleet/summary?window=" + segment(window));
            if (parent.output == Output.json) {
                printJson(out, summary);
                return;
            }
            JsonNode totals = summary.path("totals");
            out.printf("Fleet transitions from %s to %s: %d to Unhealthy, %d to Unknown, %d to Healthy%n", summary.path("from").asText(),
                    summary.path("to").asText(), totals.path("toUnhealthy").asLong(), totals.path("toUnknown").asLong(),
                    totals.path("toHealthy").asLong());
            Table table = new Table("DIMENSION", "VALUE", "TO-UNHEALTHY", "TO-UNKNOWN", "TO-HEALTHY", "TOTAL");
            summary.path("dimensions").fields().forEachRemaining(dimension -> {
                int shown = 0;
                for (JsonNode entry : dimension.getValue()) {
                    if (shown++ == top) {
                        break;
                    }
                    table.row(dimension.getKey(), entry.path("key").asText(), entry.path("toUnhealthy").asText(),
                            entry.path("toUnknown").asText(), entry.path("toHealthy").asText(), entry.path("total").asText());
                }
            });
            table.print(out);
            if (summary.path("verdicts").fields().hasNext()) {
                out.printf("%nTerminated pods by verdict%n");
                Table verdicts = new Table("DIMENSION", "VALUE", "DEVICE-FAILURE", "NO-DEVICE-FAILURE", "UNKNOWN", "TOTAL");
                summary.path("verdicts").fields().forEachRemaining(dimension -> {
                    int shown = 0;
                    for (JsonNode entry : dimension.getValue()) {
                        if (shown++ == top) {
                            break;
                        }
                        verdicts.row(dimension.getKey(), entry.path("key").asText(), entry.path("deviceFailure").asText(),
                                entry.path("noDeviceFailure").asText(), entry.path("unknown").asText(), entry.path("total").asText());
                    }
                });
                verdicts.print(out);
            }
        }
    }

    /**
     * The collector's init step: fetches this node's signing key from the processor with the pod's
     * projected ServiceAccount token ({@code --token-file}) and writes it where the collector reads it
     * ({@code node.key.file}). Waits for the processor while it cannot be reached or answers 503 (it may
     * start after the collector); a refusal (401, 403) ends at once, exit code 4.
     */
    @Command(name = "node-key", mixinStandardHelpOptions = true,
            description = "Fetch this node's signing key from the processor (GET /v1/node-key) into a file, for node.key.file.")
    static final class NodeKey extends Query {

        @Option(names = "--out", required = true, paramLabel = "FILE", description = "Where to write the key (owner-only permissions).")
        Path out;

        @Option(names = "--wait", defaultValue = "5m", paramLabel = "DURATION",
                description = "How long to keep asking while the processor is unreachable or not ready (default: ${DEFAULT-VALUE}).")
        String wait;

        @Override
        void query(PrintWriter console) throws QueryFailed {
            Duration patience = patience(wait);
            Duration interval = Duration.ofSeconds(2);
            Retry retry = Retry.of("node-key", RetryConfig.custom()
                    .maxAttempts((int) Math.max(1, patience.toMillis() / interval.toMillis()))
                    .waitDuration(interval)
                    .retryOnException(e -> e instanceof QueryFailed failed && failed.exitCode == 3)
                    .build());
            JsonNode issued;
            try {
                issued = retry.executeCallable(() -> parent.get("/v1/node-key"));
            } catch (QueryFailed e) {
                throw e;
            } catch (Exception e) {
                throw new QueryFailed("node key not fetched: " + e.getMessage(), 3);
            }
            String credential = issued.path("credential").asText("");
            if (credential.isEmpty()) {
                throw new QueryFailed("the processor answered no credential", 3);
            }
            try {
                SecretFiles.writeOwnerOnly(out, credential);
            } catch (IOException e) {
                throw new QueryFailed("cannot write --out " + out + " (" + e.getClass().getSimpleName() + ")", 2);
            }
            // The key itself is never printed.
            console.printf("node key of %s written to %s (key id %s)%n", issued.path("node").asText(), out, issued.path("keyId").asText());
        }

        /** {@code 30s}, {@code 5m}, {@code 1h}, or ISO-8601 ({@code PT90S}). */
        static Duration patience(String value) {
            try {
                return Duration.parse(value.matches("\\d+[smh]") ? "PT" + value.toUpperCase(java.util.Locale.ROOT) : value);
            } catch (java.time.format.DateTimeParseException e) {
                throw new IllegalArgumentException("--wait must be a duration such as 30s, 5m or PT90S, got '" + value + "'");
            }
        }
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.path(field);
        return value.isNull() || value.isMissingNode() ? "-" : value.asText();
    }

    /** A left-aligned text table; long messages are cut so rows stay on one line. */
    static final class Table {
        private static final int MAX_CELL = 80;
        private final List<String[]> rows = new ArrayList<>();

        Table(String... header) {
            rows.add(header);
        }

        void row(String... cells) {
            String[] cut = new String[cells.length];
            for (int i = 0; i < cells.length; i++) {
                String cell = cells[i].replace('\n', ' ');
                cut[i] = cell.length() > MAX_CELL ? cell.substring(0, MAX_CELL - 1) + "…" : cell;
            }
            rows.add(cut);
        }

        void print(PrintWriter out) {
            int columns = rows.get(0).length;
            int[] widths = new int[columns];
            for (String[] row : rows) {
                for (int i = 0; i < columns; i++) {
                    widths[i] = Math.max(widths[i], row[i].length());
                }
            }
            for (String[] row : rows) {
                StringBuilder line = new StringBuilder();
                for (int i = 0; i < columns; i++) {
                    line.append(i == columns - 1 ? row[i] : String.format("%-" + widths[i] + "s  ", row[i]));
                }
                out.println(line.toString().stripTrailing());
            }
        }
    }
}
