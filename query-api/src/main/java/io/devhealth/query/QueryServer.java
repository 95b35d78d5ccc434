package io.devhealth.query;

import io.devhealth.processor.state.ProcessorStateReads;
import io.devhealth.query.access.AccessFilter;
import io.devhealth.query.access.AccessPolicy;
import io.devhealth.query.access.ApiServerReviews;
import io.devhealth.query.access.BearerTokens;
import io.devhealth.query.access.CachedReviews;
import io.devhealth.query.access.KubernetesReviews;
import io.devhealth.query.access.NodeKeyIssuer;
import io.devhealth.query.access.QuerySecurityConfig;
import io.devhealth.query.access.TlsContexts;
import io.devhealth.query.http.Excerpt;
import io.devhealth.query.http.Exchange;
import io.devhealth.query.http.PageTokens;
import io.devhealth.query.http.QueryException;
import io.devhealth.query.http.QueryParameters;
import io.devhealth.query.http.RequestGuard;
import io.devhealth.query.http.Responses;
import io.devhealth.query.routing.ClusterView;
import io.devhealth.query.routing.FleetPartitions;
import io.devhealth.query.routing.FleetSums;
import io.devhealth.query.routing.Forwarder;
import io.devhealth.query.routing.StandbyReads;
import io.devhealth.query.routing.StreamsClusterView;
import io.devhealth.query.state.QueryViews;
import io.devhealth.query.state.StateQueries;
import io.devhealth.runtime.ops.HttpLimits;
import io.devhealth.runtime.ops.JettyServers;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.HostInfo;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.server.handler.QoSHandler;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.ssl.SslContextFactory;
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
 * there; pods are kept by pod (the pod claims), so a pod query goes to the instance that owns the
 * pod, and a pod's verdict to the one that owns it in pod-verdicts; the fleet summary is the sum
 * of every instance's part (fleet counts are partitioned by dimension value). Errors are JSON
 * {@code {"status":…,"message":…}}: 400 for bad parameters, 401/403 without valid credentials, 404 for
 * unknown pods, devices and nodes, 405 for anything but GET and HEAD, 503 while the state is not
 * queryable (rebalancing, restoring).
 *
 * <p>Security ({@link QuerySecurityConfig}): /v1 needs a bearer token or a client certificate when
 * either is configured, {@code /metrics} only when asked to, the probes never. With a keystore the
 * server speaks HTTPS only.
 *
 * <p>Served by Jetty ({@link JettyServers}, {@link HttpLimits}): slow clients hold connections, never
 * threads, and are closed at the request time limit; at most {@link #MAX_CONCURRENT_QUERIES} /v1
 * requests run at once (a query may wait on another instance), others wait up to
 * {@link #MAX_QUERY_WAIT} and then get 503, so the probes and /metrics always find a thread.
 */
public final class QueryServer implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(QueryServer.class);
    static final String V1 = "/v1/";
    /** On a 404 that means "another instance holds this key now" ({@link QueryException#notHeld}). */
    static final String NOT_HELD_HEADER = "X-Devhealth-Not-Held";
    static final int MAX_CONCURRENT_QUERIES = 16;
    static final Duration MAX_QUERY_WAIT = Duration.ofSeconds(5);
    /** The /v1 queries, the probes and /metrics beside them, the acceptor and the selector. */
    static final int THREADS = MAX_CONCURRENT_QUERIES + 8;
    private static final com.fasterxml.jackson.databind.ObjectMapper FLEET_JSON =
            com.fasterxml.jackson.databind.json.JsonMapper.builder().build();

    private final Server server;
    private final Clock clock;
    private final QuerySecurityConfig security;
    private final AccessPolicy policy;
    private final Forwarder forwarder;
    private final PageTokens pageTokens;
    private final ApiServerReviews apiServer;
    private final KubernetesReviews reviews;
    private volatile ClusterView cluster;
    private StandbyReads standbyReads = StandbyReads.OFF;
    private Counter standbyAnswered;
    private Counter standbyUnanswered;
    private byte[] nodeKeyMaster;

    private QueryServer(Server server, SSLContext tls, Clock clock, QuerySecurityConfig security, List<String> peers) {
        this.server = server;
        this.clock = clock;
        this.security = security;
        BearerTokens tokens = security.staticTokens()
                ? new BearerTokens(security.tokenFile(), security.token() == null ? null : security.token().value(),
                        security.tokenReloadInterval(), clock)
                : null;
        QuerySecurityConfig.Kubernetes kubernetes = security.kubernetes();
        // Node keys are issued against TokenReviews too, whether or not queries are authorized by Kubernetes.
        this.apiServer = kubernetes.enabled() || security.nodeKeys().enabled() ? ApiServerReviews.connect(kubernetes) : null;
        this.reviews = apiServer == null ? null : new CachedReviews(apiServer, kubernetes.cacheSize(), kubernetes.cacheTtl(), clock);
        this.policy = new AccessPolicy(security.authenticates(), tokens, security.allowedPrincipals(), peers, reviews,
                kubernetes.audiences());
        this.forwarder = new Forwarder(tls);
        this.pageTokens = PageTokens.withSecret(security.continueSecret() == null ? null : security.continueSecret().value());
    }

    /** Binds the port now (so that its number can be advertised to Kafka Streams) without serving yet, with the default limits. */
    public static QueryServer bind(String address, int port, Clock clock, QuerySecurityConfig security) {
        return bind(address, port, clock, security, HttpLimits.DEFAULT);
    }

    /** Binds the port now without serving yet, with {@code security}'s authentication and TLS and {@code limits}. */
    public static QueryServer bind(String address, int port, Clock clock, QuerySecurityConfig security, HttpLimits limits) {
        SSLContext tls = security.tls() ? TlsContexts.create(security) : null;
        SslContextFactory.Server https = null;
        if (tls != null) {
            https = new SslContextFactory.Server();
            https.setSslContext(tls);
            https.setIncludeProtocols(TlsContexts.PROTOCOLS);
            if (security.truststore() != null) {
                // With tokens as the other way in a certificate is optional; without, TLS refuses callers lacking one.
                if (security.acceptsTokens()) {
                    https.setWantClientAuth(true);
                } else {
                    https.setNeedClientAuth(true);
                }
            }
        }
        Server server;
        try {
            server = JettyServers.bind("devhealth-query", address, port, limits, THREADS, https);
        } catch (RuntimeException e) {
            throw new IllegalStateException("cannot bind the query API to " + address + ":" + port, e);
        }
        // A pool name may hold an encoded '/' and a path an empty segment: QueryParameters decodes each segment
        // itself and answers both with a 400 that says what is wrong; other ambiguous paths Jetty refuses.
        server.getConnectors()[0].getConnectionFactory(HttpConnectionFactory.class).getHttpConfiguration().setUriCompliance(
                UriCompliance.DEFAULT.with("devhealth-query", UriCompliance.Violation.AMBIGUOUS_PATH_SEPARATOR,
                        UriCompliance.Violation.AMBIGUOUS_EMPTY_SEGMENT));
        List<String> peers = peers(security);
        if (!peers.isEmpty()) {
            LOGGER.info("query API takes the caller named by a peer instance peers={} from={}", peers,
                    security.peerPrincipals().isEmpty() ? QuerySecurityConfig.KEYSTORE : QuerySecurityConfig.PEER_PRINCIPALS);
        }
        return new QueryServer(server, tls, clock, security, peers);
    }

    /** Who may name the caller of a query it forwards: without client certificates nobody, else as set, or this instance itself. */
    private static List<String> peers(QuerySecurityConfig security) {
        if (security.truststore() == null) {
            return List.of();
        }
        return security.peerPrincipals().isEmpty() ? TlsContexts.ownSubjects(security) : security.peerPrincipals();
    }

    public int port() {
        return JettyServers.port(server);
    }

    /**
     * The cluster secret node keys are derived from, for {@code GET /v1/node-key}; call before serving.
     *
     * @throws IllegalStateException when issuing node keys is on and {@code master} is empty
     */
    public void issueNodeKeysFrom(java.util.Optional<byte[]> master) {
        if (security.nodeKeys().enabled() && master.isEmpty()) {
            throw new IllegalStateException(QuerySecurityConfig.NODE_KEYS_ENABLED + " needs the cluster secret (principals.secret)");
        }
        this.nodeKeyMaster = master.map(byte[]::clone).orElse(null);
    }

    /**
     * Starts serving queries over {@code streams}; {@code advertised} is this instance's {@code application.server};
     * {@code standbyReads} says whether standby copies answer while a key's active copy cannot; {@code admin}, of the
     * application {@code applicationId}, tells how far each copy here is from its changelog's committed end.
     */
    public void serve(KafkaStreams kafkaStreams, Admin admin, String applicationId, PrometheusMeterRegistry registry, HostInfo advertised,
                      StandbyReads standbyReads) {
        serve(new StreamsClusterView(kafkaStreams, admin, applicationId, advertised, pageTokens, standbyReads), registry::scrape, registry,
                standbyReads);
        LOGGER.info("query API listening port={} advertised={}:{} tls={} authentication={} standbyReads={} standbyMaxLagRecords={}",
                port(), advertised.host(), advertised.port(), security.tls(), authenticationInWords(), standbyReads.enabled(),
                standbyReads.maxLagRecords());
    }

    /** Starts serving over any {@link ClusterView} (tests run several instances without Kafka), without standby reads. */
    void serve(ClusterView view, Supplier<String> metrics, MeterRegistry meters) {
        serve(view, metrics, meters, StandbyReads.OFF);
    }

    void serve(ClusterView view, Supplier<String> metrics, MeterRegistry meters, StandbyReads standbyReads) {
        this.cluster = view;
        this.standbyReads = standbyReads;
        // Queries whose active copy could not answer, by whether a copy read as it stands did: how often clients read behind.
        this.standbyAnswered = standbyReadCounter(meters, "answered");
        this.standbyUnanswered = standbyReadCounter(meters, "unanswered");
        if (!security.authenticates()) {
            LOGGER.warn("query API is open to anyone who can reach it, as {}=true asks; set {}, {} or {} to close it",
                    QuerySecurityConfig.INSECURE, QuerySecurityConfig.TOKEN_FILE, QuerySecurityConfig.TOKEN, QuerySecurityConfig.TRUSTSTORE);
        } else if (security.acceptsTokens() && !security.tls()) {
            LOGGER.warn("query API takes bearer tokens over plain HTTP, as {}=true allows; set {} to serve HTTPS",
                    QuerySecurityConfig.INSECURE, QuerySecurityConfig.KEYSTORE);
        }
        if (apiServer != null) {
            apiServer.countIn(meters);
        }
        NodeKeyIssuer nodeKeys = null;
        if (security.nodeKeys().enabled()) {
            if (nodeKeyMaster == null) {
                throw new IllegalStateException(QuerySecurityConfig.NODE_KEYS_ENABLED + " needs the cluster secret (principals.secret)");
            }
            QuerySecurityConfig.Kubernetes kubernetes = security.kubernetes();
            KubernetesReviews tokenReviews = reviews != null ? reviews
                    : new CachedReviews(apiServer, kubernetes.cacheSize(), kubernetes.cacheTtl(), clock);
            nodeKeys = new NodeKeyIssuer(tokenReviews, security.nodeKeys(), nodeKeyMaster, meters);
        }
        QoSHandler queries = new QoSHandler(new Endpoints(new AccessFilter(policy, reviews, meters), metrics, nodeKeys));
        queries.includePath(V1 + "*");
        queries.setMaxRequestCount(MAX_CONCURRENT_QUERIES);
        queries.setMaxSuspend(MAX_QUERY_WAIT);
        queries.setRejectStatusCode(HttpStatus.SERVICE_UNAVAILABLE_503);
        server.setHandler(queries);
        server.setErrorHandler(new JsonErrors());
        JettyServers.start(server);
    }

    /** Every path: the guard first, then the probes, /metrics (authenticated when configured), /v1 (authenticated), else 404. */
    private final class Endpoints extends Handler.Abstract {
        private final RequestGuard guard = new RequestGuard();
        private final AccessFilter access;
        private final Supplier<String> metrics;
        private final NodeKeyIssuer nodeKeys;

        Endpoints(AccessFilter access, Supplier<String> metrics, NodeKeyIssuer nodeKeys) {
            this.access = access;
            this.metrics = metrics;
            this.nodeKeys = nodeKeys;
        }

        @Override
        public boolean handle(Request request, Response response, Callback callback) {
            Exchange exchange = new Exchange(request, response, callback);
            if (!guard.admits(exchange)) {
                return true;
            }
            String path = exchange.rawPath();
            switch (path) {
                case "/healthz" -> Responses.text(exchange, 200, "ok\n", "text/plain");
                case "/readyz" -> Responses.text(exchange, cluster.ready() ? 200 : 503, cluster.state() + "\n", "text/plain");
                case "/metrics" -> {
                    if (!security.authenticateMetrics() || access.admits(exchange) != null) {
                        Responses.text(exchange, 200, metrics.get(), "text/plain; version=0.0.4; charset=utf-8");
                    }
                }
                case NodeKeyIssuer.PATH -> {
                    // Its own authentication (the collector's projected token, another audience), not the queries'.
                    if (nodeKeys == null) {
                        Responses.error(exchange, 404, "node keys are not issued here (" + QuerySecurityConfig.NODE_KEYS_ENABLED + ")");
                    } else {
                        try {
                            nodeKeys.handle(exchange);
                        } catch (IOException | RuntimeException e) {
                            LOGGER.error("node key request failed error=\"{}\"", e.toString());
                            Responses.error(exchange, 500, "internal error; the processor's log has the details");
                        }
                    }
                }
                default -> {
                    if (!path.startsWith(V1)) {
                        Responses.error(exchange, 404, "no such endpoint " + Excerpt.of(path));
                    } else {
                        AccessPolicy.Allowed caller = access.admits(exchange);
                        if (caller != null) {
                            handleV1(exchange, caller, access);
                        }
                    }
                }
            }
            return true;
        }
    }

    /** Errors the server answers itself (a malformed request, too many waiting queries) in the API's JSON, showing no input. */
    private static final class JsonErrors extends ErrorHandler {
        @Override
        public boolean handle(Request request, Response response, Callback callback) {
            int status = response.getStatus() > 0 ? response.getStatus() : HttpStatus.INTERNAL_SERVER_ERROR_500;
            Responses.error(new Exchange(request, response, callback), status, HttpStatus.getMessage(status));
            return true;
        }
    }

    private String authenticationInWords() {
        if (!security.authenticates()) {
            return "none";
        }
        List<String> ways = new ArrayList<>();
        if (security.staticTokens()) {
            ways.add("bearer");
        }
        if (security.kubernetes().enabled()) {
            ways.add("kubernetes");
        }
        if (security.truststore() != null) {
            ways.add("mtls");
        }
        return String.join("+", ways);
    }

    /** Parses the route, authorizes {@code caller} for it ({@link QueryRoute#permission()}), then answers it. */
    private void handleV1(Exchange exchange, AccessPolicy.Allowed caller, AccessFilter access) {
        try {
            QueryRoute route = QueryRoute.of(QueryParameters.parse(exchange.target(), V1), exchange.rawPath(), clock);
            // Forwarded or not, a request is authorized as its caller: the header only says where to look.
            if (!access.authorizes(exchange, caller, route.permission())) {
                return;
            }
            Hop hop = Hop.of(exchange);
            route.answer(new QueryRoute.Endpoints() {
                @Override
                public void pod(QueryRoute.Pod pod) throws IOException {
                    QueryServer.this.pod(exchange, caller, pod.namespace(), pod.name(), pod.at(), hop);
                }

                @Override
                public void podVerdict(QueryRoute.PodVerdict verdict) throws IOException {
                    Responses.json(exchange, 200, verdict(exchange, caller, verdict.namespace(), verdict.name(), verdict.at(), hop)
                            .orElseThrow(() -> QueryException.notFound("no verdict of pod " + verdict.namespace() + "/" + verdict.name()
                                    + (verdict.at() == null ? "" : " at or before " + verdict.at()))));
                }

                @Override
                public void deviceHistory(QueryRoute.DeviceHistory history) throws IOException {
                    routeByNode(exchange, caller, history.node(), hop, stores -> stores.deviceHistory(history.node(), history.driver(),
                                    history.pool(), history.device(), history.from(), history.to(), history.limit(), history.continueToken())
                            .orElseThrow(() -> QueryException.notFound("no device " + history.driver() + "/" + history.pool() + "/"
                                    + history.device() + " on node " + history.node())));
                }

                @Override
                public void nodeDevices(QueryRoute.NodeDevices node) throws IOException {
                    routeByNode(exchange, caller, node.node(), hop, stores -> stores.nodeDevices(node.node(), node.limit(),
                                    node.continueToken())
                            .orElseThrow(() -> QueryException.notFound("no node " + node.node())));
                }

                @Override
                public void fleetSummary(QueryRoute.FleetSummary summary) throws IOException {
                    QueryServer.this.fleetSummary(exchange, caller, summary.window(), hop);
                }
            });
        } catch (QueryException e) {
            if (e.notHeld()) {
                exchange.setHeader(NOT_HELD_HEADER, "true");
            }
            Responses.error(exchange, e.status(), e.getMessage());
        } catch (InvalidStateStoreException e) {
            // Kafka Streams checks a store's stream thread on every read, not only when it hands the store out: a read
            // while the thread rebalances fails here, and means what a store not handed out means (503, retry shortly).
            Responses.error(exchange, 503, "state is not queryable now (" + cluster.state() + "), retry shortly");
        } catch (IOException | RuntimeException e) {
            LOGGER.error("query failed path={} error=\"{}\"", Excerpt.of(exchange.rawPath()), e.toString(), e);
            Responses.error(exchange, 500, "internal error; the processor's log has the details");
        }
    }

    private void pod(Exchange exchange, AccessPolicy.Allowed caller, String namespace, String name, Instant at, Hop hop)
            throws IOException {
        String key = ProcessorStateReads.podKey(namespace, name);
        routeByKey(exchange, caller, "pod", key, () -> cluster.holdersOfPod(key), hop, stores -> {
            Optional<QueryViews.PodDevices> found = stores.pod(namespace, name, at);
            if (found.isPresent()) {
                // Not forwarded, even when this request was: pod-verdicts and pod-device-status are separate topics, so
                // the instance holding the pod's status may have to ask another one for its verdict. The hops stay
                // bounded, since the verdict route answers a forwarded request from local state.
                return found.get().withVerdict(verdict(exchange, caller, namespace, name, at, Hop.CLIENT).orElse(null));
            }
            if (!cluster.ready()) {
                // Partitions are moving (a rebalance, a restore): the pod's may be one this instance cannot read yet.
                throw QueryException.unavailable("pod " + key + " not found while the processor is " + cluster.state()
                        + ", retry shortly");
            }
            throw QueryException.notFound(at == null ? "no pod " + key : "no status of pod " + key + " at or before " + at);
        });
    }

    /**
     * The pod's verdict, from the instance that holds it: pod-verdicts is keyed by pod, so that is one
     * instance, not necessarily the one holding the pod's node. Asked of this instance while the holders
     * are not known, and when the request was forwarded here.
     */
    private Optional<QueryViews.PodVerdict> verdict(Exchange exchange, AccessPolicy.Allowed caller, String namespace, String name,
            Instant at, Hop hop) throws IOException {
        Optional<ClusterView.Holders> holders = hop.forwarded() ? Optional.empty() : cluster.holdersOfPodVerdict(ProcessorStateReads.podKey(namespace, name));
        if (holders.isEmpty()) {
            return (hop.standbyRead() ? stale(exchange, cluster.standbyCopies()) : cluster.local()).verdict(namespace, name, at);
        }
        // Names are Kubernetes names (checked by QueryRoute): only the time needs encoding.
        URI target = URI.create(V1 + "pods/" + namespace + "/" + name + "/verdict"
                + (at == null ? "" : "?at=" + URLEncoder.encode(at.toString(), StandardCharsets.UTF_8)));
        Reply<QueryViews.PodVerdict> reply;
        try {
            // Most pods have no verdict (they have not ended): a standby copy's "none" stands, as its verdict would.
            reply = ask(holders.get(), target, exchange, caller, "the verdict of pod", namespace + "/" + name, true,
                    stores -> stores.verdict(namespace, name, at).orElseThrow(() -> QueryException.notFound("no verdict")));
        } catch (QueryException e) {
            if (e.status() == 404 && !e.notHeld()) {
                return Optional.empty();
            }
            throw e;
        }
        if (reply.stale()) {
            exchange.setHeader(StandbyReads.STALE_HEADER, "true");
        }
        if (reply.remote() == null) {
            return Optional.of(reply.local());
        }
        if (reply.remote().statusCode() == 404) {
            return Optional.empty();
        }
        if (reply.remote().statusCode() != 200) {
            throw QueryException.unavailable("the instance holding the verdict of pod " + namespace + "/" + name + " answered "
                    + reply.remote().statusCode() + ", retry shortly");
        }
        return Optional.of(FLEET_JSON.readValue(reply.remote().body(), QueryViews.PodVerdict.class));
    }

    /**
     * The fleet summary: each partition of the two fleet stores counted once, asked of the instance where it is
     * active (this one's read here); the partitions of an instance that could not answer (gone, restoring, moving,
     * rebalancing) then from their copies read as they stand with {@link StandbyReads} on ({@link #staleCopies}), and
     * the answer marked stale.
     * A partition no copy answered makes it a 503, retry shortly: a partial sum would be wrong, not late. A peer's
     * request counts what it names ({@link FleetPartitions}); without that, every partition active here.
     */
    private void fleetSummary(Exchange exchange, AccessPolicy.Allowed caller, Duration window, Hop hop) throws IOException {
        Instant to = clock.instant();
        Instant from = to.minus(window);
        if (hop.forwarded()) {
            String asked = exchange.header(Forwarder.FLEET_PARTITIONS_HEADER);
            StateQueries stores = hop.standbyRead() ? stale(exchange, cluster.standbyCopies()) : cluster.local();
            Responses.json(exchange, 200, FleetSums.read(stores, from, to, asked == null ? null : FleetPartitions.parse(asked))
                    .view(from, to, window));
            return;
        }
        Map<String, List<ClusterView.Holders>> holders = cluster.fleetHolders();
        if (holders.isEmpty()) {
            throw QueryException.unavailable("the fleet counts' partitions are not assigned yet (" + cluster.state() + "), retry shortly");
        }
        Map<FleetPartitions.Part, ClusterView.Holders> parts = new LinkedHashMap<>();
        holders.forEach((store, byPartition) -> {
            for (int p = 0; p < byPartition.size(); p++) {
                parts.put(new FleetPartitions.Part(store, p), byPartition.get(p));
            }
        });
        FleetSums sums = new FleetSums();
        // Filled for each partition whose active copy could not answer: the copies to read as they stand, in turn.
        Map<FleetPartitions.Part, Deque<HostInfo>> staleLeft = new HashMap<>();
        QueryException failure = null;
        boolean stale = false;
        boolean staleAsked = false;
        // Round one asks each partition's active copy; later rounds (standby reads) each missing one's next stale copy.
        while (!parts.isEmpty()) {
            Map<HostInfo, List<FleetPartitions.Part>> round = new LinkedHashMap<>();
            for (Map.Entry<FleetPartitions.Part, ClusterView.Holders> part : parts.entrySet()) {
                Optional<HostInfo> next = !stale ? Optional.of(part.getValue().active())
                        : Optional.ofNullable(staleLeft.get(part.getKey())).map(Deque::pollFirst);
                next.ifPresent(host -> round.computeIfAbsent(host, h -> new ArrayList<>()).add(part.getKey()));
            }
            if (round.isEmpty()) {
                break;
            }
            staleAsked |= stale;
            for (Map.Entry<HostInfo, List<FleetPartitions.Part>> ask : round.entrySet()) {
                try {
                    sums.add(fleetPart(ask.getKey(), FleetPartitions.of(ask.getValue()), stale, exchange, caller, from, to));
                    ask.getValue().forEach(parts::remove);
                } catch (QueryException e) {
                    if (!e.retryable()) {
                        throw e;
                    }
                    failure = e;
                    if (!stale && standbyReads.enabled()) {
                        boolean activeHeld = !e.unreachable() && !e.notHeld();
                        ask.getValue().forEach(part -> staleLeft.put(part, new ArrayDeque<>(staleCopies(parts.get(part), activeHeld))));
                    }
                }
            }
            stale = true;
        }
        if (staleAsked) {
            (parts.isEmpty() ? standbyAnswered : standbyUnanswered).increment();
        }
        if (!parts.isEmpty()) {
            throw failure != null ? failure : QueryException.unavailable("fleet partitions " + parts.keySet() + " cannot be read now, retry shortly");
        }
        if (staleAsked) {
            exchange.setHeader(StandbyReads.STALE_HEADER, "true");
        }
        Responses.json(exchange, 200, sums.view(from, to, window));
    }

    /** {@code asked} of the fleet stores, counted by {@code instance}: from its active copies, or its standby ones. */
    private FleetSums fleetPart(HostInfo instance, FleetPartitions asked, boolean standby, Exchange exchange, AccessPolicy.Allowed caller,
                                Instant from, Instant to) throws IOException {
        if (cluster.isSelf(instance)) {
            try {
                return FleetSums.read(standby ? cluster.standbyCopies() : cluster.local(), from, to, asked);
            } catch (InvalidStateStoreException e) {
                throw QueryException.unavailable("state is not queryable now (" + cluster.state() + "), retry shortly");
            }
        }
        Map<String, String> headers = new HashMap<>(Map.of(Forwarder.FLEET_PARTITIONS_HEADER, asked.header()));
        if (standby) {
            headers.put(Forwarder.STANDBY_READ_HEADER, "1");
        }
        HttpResponse<String> answer = forwarder.forward(instance, exchange.target(), caller, exchange.header("Authorization"), headers);
        if (answer.statusCode() == 503) {
            throw QueryException.unavailable("instance " + instance.host() + ":" + instance.port() + " cannot count its fleet part now, "
                    + "retry shortly");
        }
        if (answer.statusCode() != 200) {
            throw new QueryException(answer.statusCode(), "instance " + instance.host() + ":" + instance.port() + " answered "
                    + answer.statusCode() + " for its fleet part");
        }
        return FleetSums.of(FLEET_JSON.readValue(answer.body(), QueryViews.FleetSummary.class));
    }

    /** What one instance's copies answer for a key; a {@link QueryException} for anything but 200. */
    private interface LocalAnswer<T> {
        T get(StateQueries stores) throws IOException;
    }

    /** How a request reached this instance: from a client (route it), or forwarded by a peer (answer from own copies). */
    private record Hop(boolean forwarded, boolean standbyRead) {
        static final Hop CLIENT = new Hop(false, false);

        static Hop of(Exchange exchange) {
            boolean forwarded = exchange.header(Forwarder.FORWARDED_HEADER) != null;
            return new Hop(forwarded, forwarded && exchange.header(Forwarder.STANDBY_READ_HEADER) != null);
        }
    }

    /** One copy's answer: a value read here ({@code remote} null), or the response of the instance asked; stale from a standby. */
    private record Reply<T>(T local, HttpResponse<String> remote, boolean stale) {
        static <T> Reply<T> remote(HttpResponse<String> response) {
            return new Reply<>(null, response, response.headers().firstValue(StandbyReads.STALE_HEADER).isPresent());
        }
    }

    private void routeByNode(Exchange exchange, AccessPolicy.Allowed caller, String node, Hop hop, LocalAnswer<?> answer)
            throws IOException {
        routeByKey(exchange, caller, "node", node, () -> cluster.holdersOfNode(node), hop, answer);
    }

    /**
     * Answers a client from the copies of {@code key} ({@link #ask}), and a peer from this instance's own.
     *
     * @param what the kind of key, in messages ({@code node}, {@code pod})
     */
    private void routeByKey(Exchange exchange, AccessPolicy.Allowed caller, String what, String key,
                            Supplier<Optional<ClusterView.Holders>> holdersOf, Hop hop, LocalAnswer<?> answer) throws IOException {
        if (hop.forwarded()) {
            Object body = answer.get(hop.standbyRead() ? stale(exchange, cluster.standbyCopies()) : cluster.local());
            Responses.json(exchange, 200, body);
            return;
        }
        ClusterView.Holders holders = holdersOf.get().orElseThrow(() ->
                QueryException.unavailable("the owner of " + what + " " + key + " is not known yet (" + cluster.state()
                        + "), retry shortly"));
        Reply<?> reply = ask(holders, exchange.target(), exchange, caller, what, key, false, answer);
        if (reply.stale()) {
            exchange.setHeader(StandbyReads.STALE_HEADER, "true");
        }
        if (reply.remote() == null) {
            Responses.json(exchange, 200, reply.local());
        } else {
            relay(exchange, reply.remote());
        }
    }

    private static Counter standbyReadCounter(MeterRegistry meters, String outcome) {
        return Counter.builder("devhealth.query.standby.reads").tag("outcome", outcome)
                .description("Queries whose key's active copy could not answer, answered from a copy read as it stands or not")
                .register(meters);
    }

    /** The answer for a key whose owner gave it away since this instance looked: it is moving, not missing. */
    private static QueryException moving(String what, String key) {
        return QueryException.unavailable(what + " " + key + " is moving between instances, retry shortly");
    }

    /** {@code stores}, once the answer is marked as one from a standby copy (set before the body is written). */
    private static StateQueries stale(Exchange exchange, StateQueries stores) {
        exchange.setHeader(StandbyReads.STALE_HEADER, "true");
        return stores;
    }

    /**
     * Asks the copies of {@code key} in turn until one answers for it: the active copy (here, or forwarded to its
     * instance), whose every answer stands but "retry shortly" (503, or "moved away"); then, with {@link StandbyReads}
     * on, the copies read as they stand ({@link #staleCopies}), of which only a 200 stands (and a "not found" where
     * {@code absenceStands}: a copy behind may not know a key yet). When none answers, what the active copy said:
     * the 503 its instance sent, or thrown.
     */
    private <T> Reply<T> ask(ClusterView.Holders holders, URI target, Exchange exchange, AccessPolicy.Allowed caller, String what, String key,
                      boolean absenceStands, LocalAnswer<T> answer) throws IOException {
        QueryException failed = null;
        HttpResponse<String> failedRemote = null;
        // Whether the active copy's instance still holds the partition and said "retry shortly" (not gone, not moved on).
        boolean activeHeld = false;
        try {
            if (cluster.isSelf(holders.active())) {
                return new Reply<>(answer.get(cluster.local()), null, false);
            }
            HttpResponse<String> fromOwner = forward(holders.active(), target, exchange, caller, false);
            if (notHeld(fromOwner)) {
                failed = moving(what, key);
            } else if (fromOwner.statusCode() == 503) {
                failedRemote = fromOwner;
                activeHeld = true;
            } else {
                return Reply.remote(fromOwner);
            }
        } catch (QueryException e) {
            if (!e.retryable()) {
                throw e;
            }
            failed = e.notHeld() ? moving(what, key) : e;
            activeHeld = cluster.isSelf(holders.active()) && !e.notHeld();
        } catch (InvalidStateStoreException e) {
            failed = QueryException.unavailable("state is not queryable now (" + cluster.state() + "), retry shortly");
            activeHeld = cluster.isSelf(holders.active());
        }
        if (standbyReads.enabled()) {
            Optional<Reply<T>> fromStandby = Optional.empty();
            boolean answered = true;
            List<String> refusals = new ArrayList<>();
            try {
                fromStandby = askStandbys(staleCopies(holders, activeHeld), target, exchange, caller, absenceStands, answer, refusals);
                answered = fromStandby.isPresent();
            } finally {
                (answered ? standbyAnswered : standbyUnanswered).increment();
            }
            if (fromStandby.isPresent()) {
                return fromStandby.get();
            }
            // Why a client is told to retry: what the active copy said is its answer; what each other copy said is here.
            LOGGER.info("no copy answered what={} key={} active={}:{} activeHeld={} copies={}", what, key, holders.active().host(),
                    holders.active().port(), activeHeld, refusals);
        }
        if (failedRemote != null) {
            return Reply.remote(failedRemote);
        }
        throw failed;
    }

    /** The message of an instance's error answer ({@code Responses.error}), or what its body starts with. */
    private static String messageOf(HttpResponse<String> answer) {
        try {
            return FLEET_JSON.readTree(answer.body()).path("message").asText();
        } catch (IOException e) {
            return Excerpt.of(answer.body());
        }
    }

    /**
     * The copies of a key to read as they stand once its active copy could not answer, in the order asked: this
     * instance's own first (no hop), then the active copy itself where its instance still holds the partition
     * ({@code activeHeld}), then the other standbys. The active copy is there because "could not answer" is, more often
     * than not, a rebalance elsewhere in the group: Kafka Streams refuses an active-only read of every task of a stream
     * thread that is not RUNNING, also of tasks the rebalance leaves where they are, and a thread stays
     * PARTITIONS_ASSIGNED until every task assigned to it has restored (a standby promoted after a SIGKILL, a task
     * moved to a new instance). A read that allows stale stores only needs the thread alive and the task's store open
     * ({@code StreamThreadStateStoreProvider#stores}), so the active copy, the freshest there is, keeps answering
     * through the rebalance, marked stale like a standby's answer.
     */
    private List<HostInfo> staleCopies(ClusterView.Holders holders, boolean activeHeld) {
        List<HostInfo> copies = new ArrayList<>();
        if (activeHeld) {
            copies.add(holders.active());
        }
        copies.addAll(holders.standbys());
        copies.sort(Comparator.comparing(host -> !cluster.isSelf(host)));
        return copies;
    }

    /**
     * The first 200 of {@code copies}, read as they stand, or where {@code absenceStands} the first "not found" (this
     * instance's thrown, marked stale); empty when none gave one.
     */
    private <T> Optional<Reply<T>> askStandbys(List<HostInfo> copies, URI target, Exchange exchange, AccessPolicy.Allowed caller,
                                        boolean absenceStands, LocalAnswer<T> answer, List<String> refusals) throws IOException {
        for (HostInfo copy : copies) {
            String refusal;
            try {
                if (cluster.isSelf(copy)) {
                    return Optional.of(new Reply<>(answer.get(cluster.standbyCopies()), null, true));
                }
                HttpResponse<String> fromCopy = forward(copy, target, exchange, caller, true);
                if (fromCopy.statusCode() == 200 || absenceStands && fromCopy.statusCode() == 404 && !notHeld(fromCopy)) {
                    return Optional.of(Reply.remote(fromCopy));
                }
                refusal = fromCopy.statusCode() + " " + messageOf(fromCopy);
            } catch (QueryException e) {
                if (absenceStands && e.status() == 404 && !e.notHeld()) {
                    exchange.setHeader(StandbyReads.STALE_HEADER, "true");
                    throw e;
                }
                refusal = e.status() + " " + e.getMessage();
            } catch (InvalidStateStoreException e) {
                refusal = e.getMessage();
            }
            refusals.add(copy.host() + ":" + copy.port() + " " + refusal);
        }
        return Optional.empty();
    }

    private static boolean notHeld(HttpResponse<String> answer) {
        return answer.statusCode() == 404 && answer.headers().firstValue(NOT_HELD_HEADER).isPresent();
    }

    /** Asks {@code instance} for {@code caller}, who sent {@code exchange}: the owner authorizes the caller, not this instance. */
    private HttpResponse<String> forward(HostInfo instance, URI target, Exchange exchange, AccessPolicy.Allowed caller,
                                         boolean standbyRead) {
        return forwarder.forward(instance, target, caller, exchange.header("Authorization"),
                standbyRead ? Map.of(Forwarder.STANDBY_READ_HEADER, "1") : Map.of());
    }

    private static void relay(Exchange exchange, HttpResponse<String> answer) {
        answer.headers().firstValue("WWW-Authenticate").ifPresent(value -> exchange.setHeader("WWW-Authenticate", value));
        answer.headers().firstValue(StandbyReads.STALE_HEADER).ifPresent(value -> exchange.setHeader(StandbyReads.STALE_HEADER, value));
        Responses.text(exchange, answer.statusCode(), answer.body(), Responses.JSON_TYPE);
    }

    @Override
    public void close() {
        JettyServers.stop(server);
        if (apiServer != null) {
            apiServer.close();
        }
    }
}
