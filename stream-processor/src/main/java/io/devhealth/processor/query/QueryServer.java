package io.devhealth.processor.query;

import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import io.devhealth.processor.internals.FleetCounts;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.state.HostInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The post-mortem query API over HTTP/JSON (a pod's devices as of a time, a device's history, a node's devices, fleet counts), plus {@code /healthz}, {@code /readyz} and
 * {@code /metrics}.
 *
 * <ul>
 *   <li>{@code GET /v1/pods/{ns}/{name}/devices?at=<RFC 3339>}: the pod's device health per container
 *       as of {@code at}; without it the latest, which for an ended pod is its status as it ended.</li>
 *   <li>{@code GET /v1/devices/{node}/{driver}/{pool}/{device}/history?from=&to=&limit=&continue=}:
 *       every transition of the device in [from, to], oldest first.</li>
 *   <li>{@code GET /v1/nodes/{node}/devices?limit=&continue=}: every device of the node with its
 *       merged health and each source's latest word.</li>
 *   <li>{@code GET /v1/fleet/summary?window=1h}: transitions counted per node, driver, product and
 *       reason over the fleet-stats windows that started in the last {@code window} (default 1h;
 *       {@code 30s}, {@code 15m}, {@code 6h}, {@code 7d} or ISO-8601 such as {@code PT90M}).</li>
 * </ul>
 * State is partitioned by node, so node and device queries go to the instance that owns the node
 * (Kafka Streams {@code queryMetadataForKey} over {@code application.server}) and are forwarded
 * there; a pod is looked up locally and then on every other instance; the fleet summary is the sum
 * of every instance's part (fleet counts are partitioned by dimension value). Errors are JSON
 * {@code {"status":…,"message":…}}: 400 for bad parameters, 401/403 without valid credentials, 404 for
 * unknown pods, devices and nodes, 405 for anything but GET and HEAD, 503 while the state is not
 * queryable (rebalancing, restoring).
 *
 * <p>Security ({@link QuerySecurityConfig}): /v1 needs a bearer token or a client certificate when
 * either is configured, {@code /metrics} only when asked to, the probes never. With a keystore the
 * server speaks HTTPS only.
 */
public final class QueryServer implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(QueryServer.class);
    static final String V1 = "/v1/";
    private static final com.fasterxml.jackson.databind.ObjectMapper FLEET_JSON =
            com.fasterxml.jackson.databind.json.JsonMapper.builder().build();

    /** The JDK server's switch for TCP_NODELAY on accepted connections; read once, when its first server is created. */
    static final String NODELAY_PROPERTY = "sun.net.httpserver.nodelay";

    static {
        preferNoDelay(System.getProperties());
    }

    private final HttpServer server;
    private final ExecutorService executor;
    private final Clock clock;
    private final QuerySecurityConfig security;
    private final AccessPolicy policy;
    private final Forwarder forwarder;
    private final PageTokens pageTokens;
    private volatile ClusterView cluster;

    private QueryServer(HttpServer server, SSLContext tls, Clock clock, QuerySecurityConfig security) {
        this.server = server;
        this.clock = clock;
        this.security = security;
        BearerTokens tokens = security.acceptsTokens()
                ? new BearerTokens(security.tokenFile(), security.token() == null ? null : security.token().value(),
                        security.tokenReloadInterval(), clock)
                : null;
        this.policy = new AccessPolicy(security.authenticates(), tokens, security.allowedPrincipals());
        this.forwarder = new Forwarder(tls);
        this.pageTokens = PageTokens.withSecret(security.continueSecret() == null ? null : security.continueSecret().value());
        AtomicInteger threads = new AtomicInteger();
        this.executor = Executors.newFixedThreadPool(4, r -> {
            Thread thread = new Thread(r, "devhealth-query-" + threads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        server.setExecutor(executor);
    }

    /** Binds the port now (so that its number can be advertised to Kafka Streams) without serving yet; open, plain HTTP. */
    public static QueryServer bind(String address, int port, Clock clock) {
        return bind(address, port, clock, QuerySecurityConfig.open());
    }

    /** Binds the port now without serving yet, with {@code security}'s authentication and TLS. */
    public static QueryServer bind(String address, int port, Clock clock, QuerySecurityConfig security) {
        InetSocketAddress socket = new InetSocketAddress(address, port);
        try {
            if (!security.tls()) {
                return new QueryServer(HttpServer.create(socket, 64), null, clock, security);
            }
            SSLContext tls = TlsContexts.create(security);
            HttpsServer https = HttpsServer.create(socket, 64);
            https.setHttpsConfigurator(new HttpsConfigurator(tls) {
                @Override
                public void configure(HttpsParameters params) {
                    SSLParameters parameters = tls.getDefaultSSLParameters();
                    parameters.setProtocols(TlsContexts.PROTOCOLS);
                    if (security.truststore() != null) {
                        // With tokens as the other way in a certificate is optional; without, TLS refuses callers lacking one.
                        if (security.acceptsTokens()) {
                            parameters.setWantClientAuth(true);
                        } else {
                            parameters.setNeedClientAuth(true);
                        }
                    }
                    params.setSSLParameters(parameters);
                }
            });
            return new QueryServer(https, tls, clock, security);
        } catch (IOException e) {
            throw new IllegalStateException("cannot bind the query API to " + address + ":" + port, e);
        }
    }

    /**
     * Turns TCP_NODELAY on unless the operator chose otherwise. The JDK server writes a response's headers
     * and its body as two segments; with Nagle's algorithm on, the body waits for the client's delayed ACK
     * of the headers, which adds about 40 ms to every answer on Linux (measured by the QueryBenchmark:
     * p50 44 ms with it, 1 ms without).
     */
    static void preferNoDelay(java.util.Properties system) {
        if (system.getProperty(NODELAY_PROPERTY) == null) {
            system.setProperty(NODELAY_PROPERTY, "true");
        }
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** Starts serving queries over {@code streams}; {@code self} is this instance's {@code application.server}. */
    public void serve(KafkaStreams kafkaStreams, PrometheusMeterRegistry registry, HostInfo advertised) {
        serve(new StreamsClusterView(kafkaStreams, advertised, pageTokens), registry::scrape, registry);
        LOGGER.info("query API listening port={} advertised={}:{} tls={} authentication={}", port(), advertised.host(), advertised.port(),
                security.tls(), authenticationInWords());
    }

    /** Starts serving over any {@link ClusterView} (tests run several instances without Kafka). */
    void serve(ClusterView view, Supplier<String> metrics, MeterRegistry meters) {
        this.cluster = view;
        if (!security.authenticates()) {
            LOGGER.warn("query API is open to anyone who can reach it; set {}, {} or {}", QuerySecurityConfig.TOKEN_FILE,
                    QuerySecurityConfig.TOKEN, QuerySecurityConfig.TRUSTSTORE);
        }
        RequestGuard guard = new RequestGuard();
        AccessFilter access = new AccessFilter(policy, meters);
        context("/healthz", guard, null, exchange -> Responses.text(exchange, 200, "ok\n", "text/plain"));
        context("/readyz", guard, null, exchange -> Responses.text(exchange, cluster.ready() ? 200 : 503, cluster.state() + "\n", "text/plain"));
        context("/metrics", guard, security.authenticateMetrics() ? access : null,
                exchange -> Responses.text(exchange, 200, metrics.get(), "text/plain; version=0.0.4; charset=utf-8"));
        context(V1, guard, access, this::handleV1);
        context("/", guard, null, exchange -> Responses.error(exchange, 404, "no such endpoint "
                + Excerpt.of(exchange.getRequestURI().getRawPath())));
        server.start();
    }

    private void context(String path, RequestGuard guard, AccessFilter access, HttpHandler handler) {
        HttpContext context = server.createContext(path, exchange -> {
            // A context matches by prefix: /healthz must not also answer /healthzfoo.
            String requested = exchange.getRequestURI().getRawPath();
            if (!path.endsWith("/") && !requested.equals(path)) {
                Responses.error(exchange, 404, "no such endpoint " + Excerpt.of(requested));
                return;
            }
            handler.handle(exchange);
        });
        context.getFilters().add(guard);
        if (access != null) {
            context.getFilters().add(access);
        }
    }

    private String authenticationInWords() {
        if (!security.authenticates()) {
            return "none";
        }
        return (security.acceptsTokens() ? "bearer" : "") + (security.acceptsTokens() && security.truststore() != null ? "+" : "")
                + (security.truststore() != null ? "mtls" : "");
    }

    private void handleV1(HttpExchange exchange) throws IOException {
        try {
            QueryParameters request = QueryParameters.parse(exchange.getRequestURI(), V1);
            List<String> path = request.segments();
            boolean forwarded = exchange.getRequestHeaders().containsKey(Forwarder.FORWARDED_HEADER);
            StateQueries local = cluster.local();
            if (path.size() == 4 && path.get(0).equals("pods") && path.get(3).equals("devices")) {
                String namespace = KubernetesNames.namespace(path.get(1));
                String name = KubernetesNames.podName(path.get(2));
                Instant at = request.allowOnly("at").instant("at").orElse(null);
                pod(exchange, namespace, name, at, forwarded);
            } else if (path.size() >= 6 && path.get(0).equals("devices") && path.get(path.size() - 1).equals("history")) {
                String node = KubernetesNames.nodeName(path.get(1));
                String driver = KubernetesNames.driver(path.get(2));
                String device = KubernetesNames.device(path.get(path.size() - 2));
                String pool = KubernetesNames.pool(String.join("/", path.subList(3, path.size() - 2)));
                request.allowOnly("from", "to", "limit", "continue");
                Instant to = request.instant("to").orElseGet(clock::instant);
                Instant from = request.instant("from").orElse(Instant.EPOCH);
                if (from.isAfter(to)) {
                    throw QueryException.badRequest("from (" + from + ") is after to (" + to + ")");
                }
                int limit = request.limit();
                String token = request.continueToken().orElse(null);
                routeByNode(exchange, node, forwarded, () -> local.deviceHistory(node, driver, pool, device, from, to, limit, token)
                        .orElseThrow(() -> QueryException.notFound("no device " + driver + "/" + pool + "/" + device + " on node " + node)));
            } else if (path.size() == 3 && path.get(0).equals("nodes") && path.get(2).equals("devices")) {
                String node = KubernetesNames.nodeName(path.get(1));
                request.allowOnly("limit", "continue");
                int limit = request.limit();
                String token = request.continueToken().orElse(null);
                routeByNode(exchange, node, forwarded, () -> local.nodeDevices(node, limit, token)
                        .orElseThrow(() -> QueryException.notFound("no node " + node)));
            } else if (path.size() == 2 && path.get(0).equals("fleet") && path.get(1).equals("summary")) {
                fleetSummary(exchange, request.allowOnly("window"), forwarded);
            } else {
                throw QueryException.notFound("no such endpoint " + Excerpt.of(exchange.getRequestURI().getRawPath()));
            }
        } catch (QueryException e) {
            Responses.error(exchange, e.status(), e.getMessage());
        } catch (RuntimeException e) {
            LOGGER.error("query failed path={} error=\"{}\"", Excerpt.of(exchange.getRequestURI().getRawPath()), e.toString(), e);
            Responses.error(exchange, 500, "internal error; the processor's log has the details");
        }
    }

    private void pod(HttpExchange exchange, String namespace, String name, Instant at, boolean forwarded) throws IOException {
        StateQueries local = cluster.local();
        Optional<QueryViews.PodDevices> found = local.pod(namespace, name, at);
        if (found.isPresent()) {
            Responses.json(exchange, 200, found.get());
            return;
        }
        if (!forwarded && !local.knowsPod(namespace, name)) {
            // Pods are stored with their node: ask every other instance.
            for (HostInfo instance : cluster.otherPodInstances()) {
                HttpResponse<String> answer = forwarder.forward(instance, exchange.getRequestURI(), authorization(exchange));
                if (answer.statusCode() != 404) {
                    relay(exchange, answer);
                    return;
                }
            }
        }
        throw QueryException.notFound(at == null ? "no pod " + namespace + "/" + name
                : "no status of pod " + namespace + "/" + name + " at or before " + at);
    }

    private void fleetSummary(HttpExchange exchange, QueryParameters request, boolean forwarded) throws IOException {
        Duration window = window(request.value("window").orElse(null));
        Instant to = clock.instant();
        Instant from = to.minus(window);
        List<HostInfo> owners = cluster.fleetInstances();
        if (owners.isEmpty()) {
            throw QueryException.unavailable("no instance holds the fleet counts yet (" + cluster.state() + ")");
        }
        // An instance that holds no fleet-stats partition has no such local store to ask.
        boolean holdsCounts = owners.stream().anyMatch(cluster::isSelf);
        Map<String, FleetCounts> counts = holdsCounts ? new TreeMap<>(cluster.local().fleetCounts(from, to)) : new TreeMap<>();
        if (!forwarded) {
            for (HostInfo instance : owners) {
                if (cluster.isSelf(instance)) {
                    continue;
                }
                HttpResponse<String> answer = forwarder.forward(instance, exchange.getRequestURI(), authorization(exchange));
                if (answer.statusCode() != 200) {
                    relay(exchange, answer);
                    return;
                }
                QueryViews.FleetSummary part = FLEET_JSON.readValue(answer.body(), QueryViews.FleetSummary.class);
                part.dimensions().forEach((dimension, entries) -> entries.forEach(e -> counts.merge(dimension + ":" + e.key(),
                        new FleetCounts("", e.toUnhealthy(), e.toUnknown(), e.toHealthy()), FleetCounts::plus)));
            }
        }
        Responses.json(exchange, 200, QueryViews.fleetSummary(from, to, window, counts));
    }

    static final Duration DEFAULT_FLEET_WINDOW = Duration.ofHours(1);
    private static final Pattern SHORT_DURATION = Pattern.compile("(\\d{1,9})([smhd])");

    /** {@code 30s}, {@code 15m}, {@code 6h}, {@code 7d}, or ISO-8601 ({@code PT90M}); positive. */
    static Duration window(String value) {
        if (value == null || value.isEmpty()) {
            return DEFAULT_FLEET_WINDOW;
        }
        Duration window = null;
        Matcher shortForm = SHORT_DURATION.matcher(value);
        if (shortForm.matches()) {
            long amount = Long.parseLong(shortForm.group(1));
            window = switch (shortForm.group(2)) {
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "h" -> Duration.ofHours(amount);
                default -> Duration.ofDays(amount);
            };
        } else {
            try {
                window = Duration.parse(value);
            } catch (DateTimeParseException e) {
                // reported below
            }
        }
        if (window == null || window.isZero() || window.isNegative()) {
            throw QueryException.badRequest("window must be a positive duration such as 30s, 15m, 6h, 7d or PT90M, got '" + value + "'");
        }
        return window;
    }

    private interface LocalAnswer {
        Object get();
    }

    private void routeByNode(HttpExchange exchange, String node, boolean forwarded, LocalAnswer answer) throws IOException {
        if (!forwarded) {
            HostInfo owner = cluster.ownerOfNode(node).orElseThrow(() ->
                    QueryException.unavailable("the owner of node " + node + " is not known yet (" + cluster.state() + "), retry shortly"));
            if (!cluster.isSelf(owner)) {
                relay(exchange, forwarder.forward(owner, exchange.getRequestURI(), authorization(exchange)));
                return;
            }
        }
        Responses.json(exchange, 200, answer.get());
    }

    private static String authorization(HttpExchange exchange) {
        return exchange.getRequestHeaders().getFirst("Authorization");
    }

    private static void relay(HttpExchange exchange, HttpResponse<String> answer) throws IOException {
        answer.headers().firstValue("WWW-Authenticate").ifPresent(value -> exchange.getResponseHeaders().set("WWW-Authenticate", value));
        Responses.text(exchange, answer.statusCode(), answer.body(), Responses.JSON_TYPE);
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
