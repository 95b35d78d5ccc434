package io.devhealth.processor.query;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.devhealth.processor.DeviceHealthTopology;
import io.devhealth.processor.internals.FleetCounts;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.StreamsMetadata;
import org.apache.kafka.streams.state.HostInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The post-mortem query API over HTTP/JSON (DESIGN §5), plus {@code /healthz}, {@code /readyz} and
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
 * {@code {"status":…,"message":…}}: 400 for bad parameters, 404 for unknown pods, devices and nodes,
 * 503 while the state is not queryable (rebalancing, restoring).
 */
public final class QueryServer implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(QueryServer.class);
    static final String FORWARDED_HEADER = "X-Devhealth-Forwarded";
    static final int DEFAULT_LIMIT = 100;
    static final int MAX_LIMIT = 1000;

    private final ObjectMapper json = JsonMapper.builder().build();
    private final HttpServer server;
    private final ExecutorService executor;
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final Clock clock;
    private volatile KafkaStreams streams;
    private volatile LocalStateQueries local;
    private volatile PrometheusMeterRegistry meters;
    private volatile HostInfo self;

    private QueryServer(HttpServer server, Clock clock) {
        this.server = server;
        this.clock = clock;
        AtomicInteger threads = new AtomicInteger();
        this.executor = Executors.newFixedThreadPool(4, r -> {
            Thread thread = new Thread(r, "devhealth-query-" + threads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        server.setExecutor(executor);
    }

    /** Binds the port now (so that its number can be advertised to Kafka Streams) without serving yet. */
    public static QueryServer bind(String address, int port, Clock clock) {
        try {
            return new QueryServer(HttpServer.create(new InetSocketAddress(address, port), 64), clock);
        } catch (IOException e) {
            throw new IllegalStateException("cannot bind the query API to " + address + ":" + port, e);
        }
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** Starts serving queries over {@code streams}; {@code self} is this instance's {@code application.server}. */
    public void serve(KafkaStreams kafkaStreams, PrometheusMeterRegistry registry, HostInfo advertised) {
        this.streams = kafkaStreams;
        this.local = new LocalStateQueries(kafkaStreams);
        this.meters = registry;
        this.self = advertised;
        server.createContext("/healthz", exchange -> respondText(exchange, 200, "ok\n", "text/plain"));
        server.createContext("/readyz", exchange -> {
            KafkaStreams.State state = streams.state();
            respondText(exchange, state == KafkaStreams.State.RUNNING ? 200 : 503, state + "\n", "text/plain");
        });
        server.createContext("/metrics", exchange -> respondText(exchange, 200, meters.scrape(), "text/plain; version=0.0.4; charset=utf-8"));
        server.createContext("/v1/", this::handleV1);
        server.start();
        LOGGER.info("query API listening port={} advertised={}:{}", port(), advertised.host(), advertised.port());
    }

    private void handleV1(HttpExchange exchange) throws IOException {
        try {
            if (!"GET".equals(exchange.getRequestMethod())) {
                throw new QueryException(405, "only GET is supported");
            }
            List<String> path = segments(exchange.getRequestURI());
            Map<String, String> params = params(exchange.getRequestURI());
            boolean forwarded = exchange.getRequestHeaders().containsKey(FORWARDED_HEADER);
            if (path.size() == 4 && path.get(0).equals("pods") && path.get(3).equals("devices")) {
                pod(exchange, path.get(1), path.get(2), params, forwarded);
            } else if (path.size() >= 6 && path.get(0).equals("devices") && path.get(path.size() - 1).equals("history")) {
                String node = path.get(1);
                String driver = path.get(2);
                String device = path.get(path.size() - 2);
                String pool = String.join("/", path.subList(3, path.size() - 2));
                Instant to = instant(params, "to").orElseGet(clock::instant);
                Instant from = instant(params, "from").orElse(Instant.EPOCH);
                if (from.isAfter(to)) {
                    throw QueryException.badRequest("from (" + from + ") is after to (" + to + ")");
                }
                int limit = limit(params);
                routeByNode(exchange, node, forwarded, () -> local.deviceHistory(node, driver, pool, device, from, to, limit,
                        params.get("continue")).orElseThrow(() -> QueryException.notFound(
                                "no device " + driver + "/" + pool + "/" + device + " on node " + node)));
            } else if (path.size() == 3 && path.get(0).equals("nodes") && path.get(2).equals("devices")) {
                String node = path.get(1);
                int limit = limit(params);
                routeByNode(exchange, node, forwarded, () -> local.nodeDevices(node, limit, params.get("continue"))
                        .orElseThrow(() -> QueryException.notFound("no node " + node)));
            } else if (path.size() == 2 && path.get(0).equals("fleet") && path.get(1).equals("summary")) {
                fleetSummary(exchange, params, forwarded);
            } else {
                throw QueryException.notFound("no such endpoint " + exchange.getRequestURI().getPath());
            }
        } catch (QueryException e) {
            respondJson(exchange, e.status(), new QueryViews.Error(e.status(), e.getMessage()));
        } catch (RuntimeException e) {
            LOGGER.error("query failed uri={} error=\"{}\"", exchange.getRequestURI(), e.toString(), e);
            respondJson(exchange, 500, new QueryViews.Error(500, "internal error: " + e.getMessage()));
        }
    }

    private void pod(HttpExchange exchange, String namespace, String name, Map<String, String> params, boolean forwarded)
            throws IOException {
        Instant at = instant(params, "at").orElse(null);
        Optional<QueryViews.PodDevices> found = local.pod(namespace, name, at);
        if (found.isPresent()) {
            respondJson(exchange, 200, found.get());
            return;
        }
        boolean knownHere = local.knowsPod(namespace, name);
        if (!forwarded && !knownHere) {
            // Pods are stored with their node: ask every other instance.
            for (StreamsMetadata instance : streams.streamsMetadataForStore(DeviceHealthTopology.POD_STATUS_STORE)) {
                if (!instance.hostInfo().equals(self)) {
                    HttpResponse<String> answer = forward(instance.hostInfo(), exchange.getRequestURI());
                    if (answer.statusCode() != 404) {
                        respondText(exchange, answer.statusCode(), answer.body(), "application/json");
                        return;
                    }
                }
            }
        }
        throw QueryException.notFound(at == null ? "no pod " + namespace + "/" + name
                : "no status of pod " + namespace + "/" + name + " at or before " + at);
    }

    private void fleetSummary(HttpExchange exchange, Map<String, String> params, boolean forwarded) throws IOException {
        Duration window = window(params.get("window"));
        Instant to = clock.instant();
        Instant from = to.minus(window);
        var owners = streams.streamsMetadataForStore(DeviceHealthTopology.FLEET_STATS_STORE);
        if (owners.isEmpty()) {
            throw QueryException.unavailable("no instance holds the fleet counts yet (" + streams.state() + ")");
        }
        // An instance that holds no fleet-stats partition has no such local store to ask.
        boolean holdsCounts = owners.stream().anyMatch(instance -> instance.hostInfo().equals(self));
        Map<String, FleetCounts> counts = holdsCounts ? new TreeMap<>(local.fleetCounts(from, to)) : new TreeMap<>();
        if (!forwarded) {
            for (StreamsMetadata instance : owners) {
                if (instance.hostInfo().equals(self)) {
                    continue;
                }
                HttpResponse<String> answer = forward(instance.hostInfo(), exchange.getRequestURI());
                if (answer.statusCode() != 200) {
                    respondText(exchange, answer.statusCode(), answer.body(), "application/json");
                    return;
                }
                QueryViews.FleetSummary part = json.readValue(answer.body(), QueryViews.FleetSummary.class);
                part.dimensions().forEach((dimension, entries) -> entries.forEach(e -> counts.merge(dimension + ":" + e.key(),
                        new FleetCounts("", e.toUnhealthy(), e.toUnknown(), e.toHealthy()), FleetCounts::plus)));
            }
        }
        respondJson(exchange, 200, QueryViews.fleetSummary(from, to, window, counts));
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
            KeyQueryMetadata owner = streams.queryMetadataForKey(DeviceHealthTopology.DEVICE_STATE_STORE, node,
                    Serdes.String().serializer());
            if (owner == null || owner.equals(KeyQueryMetadata.NOT_AVAILABLE)) {
                throw QueryException.unavailable("the owner of node " + node + " is not known yet (" + streams.state() + ")");
            }
            if (!owner.activeHost().equals(self)) {
                HttpResponse<String> forwardedAnswer = forward(owner.activeHost(), exchange.getRequestURI());
                respondText(exchange, forwardedAnswer.statusCode(), forwardedAnswer.body(), "application/json");
                return;
            }
        }
        respondJson(exchange, 200, answer.get());
    }

    private HttpResponse<String> forward(HostInfo host, URI uri) {
        URI target = URI.create("http://" + host.host() + ":" + host.port() + uri.getRawPath()
                + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery()));
        try {
            return client.send(HttpRequest.newBuilder(target).timeout(Duration.ofSeconds(10)).header(FORWARDED_HEADER, "1").GET().build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw QueryException.unavailable("instance " + host.host() + ":" + host.port() + " did not answer: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw QueryException.unavailable("interrupted while asking " + host.host() + ":" + host.port());
        }
    }

    private static List<String> segments(URI uri) {
        String path = uri.getRawPath().substring("/v1/".length());
        List<String> segments = new ArrayList<>();
        for (String raw : path.split("/", -1)) {
            if (raw.isEmpty()) {
                throw QueryException.badRequest("empty path segment in " + uri.getRawPath());
            }
            segments.add(URLDecoder.decode(raw, StandardCharsets.UTF_8));
        }
        return segments;
    }

    private static Map<String, String> params(URI uri) {
        Map<String, String> params = new HashMap<>();
        if (uri.getRawQuery() != null) {
            Arrays.stream(uri.getRawQuery().split("&")).filter(p -> !p.isEmpty()).forEach(pair -> {
                int eq = pair.indexOf('=');
                String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
                String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
                params.put(key, value);
            });
        }
        return params;
    }

    private static Optional<Instant> instant(Map<String, String> params, String name) {
        String value = params.get(name);
        if (value == null || value.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(OffsetDateTime.parse(value).toInstant());
        } catch (DateTimeParseException e) {
            throw QueryException.badRequest(name + " must be an RFC 3339 time such as 2026-11-29T10:00:00Z, got '" + value + "'");
        }
    }

    private static int limit(Map<String, String> params) {
        String value = params.get("limit");
        if (value == null || value.isEmpty()) {
            return DEFAULT_LIMIT;
        }
        try {
            int limit = Integer.parseInt(value);
            if (limit >= 1 && limit <= MAX_LIMIT) {
                return limit;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw QueryException.badRequest("limit must be an integer from 1 to " + MAX_LIMIT + ", got '" + value + "'");
    }

    private void respondJson(HttpExchange exchange, int status, Object body) throws IOException {
        respond(exchange, status, json.writeValueAsBytes(body), "application/json");
    }

    private static void respondText(HttpExchange exchange, int status, String body, String contentType) throws IOException {
        respond(exchange, status, body.getBytes(StandardCharsets.UTF_8), contentType);
    }

    private static void respond(HttpExchange exchange, int status, byte[] body, String contentType) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", contentType);
        exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
