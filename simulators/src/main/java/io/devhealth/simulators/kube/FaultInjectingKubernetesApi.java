package io.devhealth.simulators.kube;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.logging.Level;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fabric8 mock API server (CRUD plus {@code server.expect()} expectations) behind a dispatcher that
 * injects API-server faults, for testing a client's error handling:
 * <ul>
 *   <li>{@link #injectRandomly}: a share of matching requests answered with one of the given
 *       {@link Fault}s (HTTP status with a Kubernetes {@code Status} body, {@code Retry-After} for 429, or a
 *       delayed answer that trips the client's request timeout) instead of reaching the CRUD store;
 *   <li>{@link #injectNext}: the next {@code n} matching requests fail the same way;
 *   <li>{@link #goDown()} / {@link #comeBack()}: the server stops listening (connections are refused)
 *       and later listens again on the same port, <b>with the same stored objects</b>;
 *   <li>{@link #requests()}: every request that reached the server (method, path, content type, body),
 *       without consuming the mock's own queue.
 * </ul>
 * Faults are decided before the CRUD store sees the request, so an injected failure changes nothing.
 */
public final class FaultInjectingKubernetesApi implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(FaultInjectingKubernetesApi.class);
    private static final String HOST = "127.0.0.1";
    /** Strong reference: java.util.logging keeps loggers weakly, and would forget the level. */
    private static final java.util.logging.Logger MOCK_WEB_SERVER_LOGGER =
            java.util.logging.Logger.getLogger(MockWebServer.class.getName());

    /** What an injected failure looks like to the client. */
    public record Fault(int code, int retryAfterSeconds, Duration delay) {

        /** An HTTP error with a Kubernetes {@code Status} body (e.g. 500, 503, 409, 404, 422). */
        public static Fault status(int code) {
            return new Fault(code, 0, Duration.ZERO);
        }

        /** 429 with {@code Retry-After} (header and {@code details.retryAfterSeconds}), as API priority and fairness sends. */
        public static Fault tooManyRequests(int retryAfterSeconds) {
            return new Fault(429, retryAfterSeconds, Duration.ZERO);
        }

        /** A 504 answer that arrives only after {@code delay}: longer than the client's request timeout, it is a timeout. */
        public static Fault slow(Duration delay) {
            return new Fault(504, 0, delay);
        }
    }

    /** A request as the server received it. */
    public record Request(String method, String path, String contentType, String body, boolean injected) {
    }

    private final Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
    private final FaultDispatcher dispatcher;
    private final Context context;
    private final int port;
    private final List<KubernetesClient> clients = new CopyOnWriteArrayList<>();
    private volatile KubernetesMockServer server;
    private boolean closed;

    @SuppressWarnings("deprecation") // Serialization.jsonMapper(): what fabric8's own mock extension passes
    private FaultInjectingKubernetesApi() {
        MOCK_WEB_SERVER_LOGGER.setLevel(Level.WARNING);
        this.context = new Context(Serialization.jsonMapper());
        this.dispatcher = new FaultDispatcher(new KubernetesMixedDispatcher(responses));
        this.server = listen(0);
        this.port = server.getPort();
    }

    /** Starts an empty API on a random free port of 127.0.0.1, with no faults. */
    public static FaultInjectingKubernetesApi start() {
        FaultInjectingKubernetesApi api = new FaultInjectingKubernetesApi();
        LOGGER.info("fault-injecting kubernetes api started url={}", api.url());
        return api;
    }

    private KubernetesMockServer listen(int onPort) {
        KubernetesMockServer mock = new KubernetesMockServer(context, new MockWebServer(), responses, dispatcher, false);
        try {
            mock.init(InetAddress.getByName(HOST), onPort);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("cannot resolve " + HOST, e);
        }
        return mock;
    }

    /** @return {@code http://127.0.0.1:<port>}; stays the same across {@link #goDown()} / {@link #comeBack()} */
    public String url() {
        return "http://" + HOST + ":" + port;
    }

    /** The mock server, for {@code expect()} expectations; replaced by {@link #comeBack()}. */
    public KubernetesMockServer server() {
        return server;
    }

    /**
     * A new client for this API with fabric8's own request retries turned off (so that the code under
     * test is the only one retrying) and the given request timeout; closed with the API.
     */
    public KubernetesClient newClient(Duration requestTimeout) {
        Config config = new ConfigBuilder(Config.empty())
                .withMasterUrl(url())
                .withNamespace("test")
                .withTrustCerts(true)
                .withRequestRetryBackoffLimit(0)
                .withRequestTimeout((int) requestTimeout.toMillis())
                .withConnectionTimeout(2_000)
                .build();
        KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build();
        clients.add(client);
        return client;
    }

    /**
     * From now on, each request matching {@code which} fails with probability {@code rate}, with one of
     * {@code faults} picked at random; deterministic for a given {@code seed}.
     */
    public void injectRandomly(double rate, long seed, Predicate<Request> which, Fault... faults) {
        if (faults.length == 0) {
            throw new IllegalArgumentException("no faults given");
        }
        dispatcher.random = new RandomFaults(rate, new Random(seed), which, List.of(faults));
    }

    /** The next {@code count} requests matching {@code which} fail with {@code fault}. */
    public void injectNext(int count, Predicate<Request> which, Fault fault) {
        dispatcher.queued.add(new QueuedFaults(new AtomicInteger(count), which, fault));
    }

    /** Stops every injection; later requests reach the store. */
    public void stopInjecting() {
        dispatcher.random = null;
        dispatcher.queued.clear();
    }

    /** @return how many failures were injected so far */
    public int injectedCount() {
        return dispatcher.injected.get();
    }

    /** Every request received so far, in order of arrival. */
    public List<Request> requests() {
        return List.copyOf(dispatcher.log);
    }

    /** Forgets the recorded requests. */
    public void clearRequests() {
        dispatcher.log.clear();
    }

    /** Stops listening: connections to {@link #url()} are refused until {@link #comeBack()}. Stored objects are kept. */
    public synchronized void goDown() {
        dispatcher.keepOnShutdown = true;
        server.destroy();
        LOGGER.info("kubernetes api down url={}", url());
    }

    /** Listens again on the same port, with the objects stored before {@link #goDown()}. */
    public synchronized void comeBack() {
        server = listen(port);
        dispatcher.keepOnShutdown = false;
        LOGGER.info("kubernetes api back url={}", url());
    }

    /** Closes the clients made by {@link #newClient} and stops the server. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        clients.forEach(KubernetesClient::close);
        dispatcher.keepOnShutdown = false;
        server.destroy();
    }

    /** Path predicates, for {@link #injectRandomly} and {@link #injectNext}. */
    public static Predicate<Request> method(String method) {
        return request -> method.equalsIgnoreCase(request.method());
    }

    /** Requests whose path (without query) ends with {@code suffix}, e.g. {@code "/pods/train-0/status"}. */
    public static Predicate<Request> pathEndsWith(String suffix) {
        return request -> {
            String path = request.path();
            int query = path.indexOf('?');
            return (query < 0 ? path : path.substring(0, query)).endsWith(suffix);
        };
    }

    private record RandomFaults(double rate, Random random, Predicate<Request> which, List<Fault> faults) {
    }

    private record QueuedFaults(AtomicInteger remaining, Predicate<Request> which, Fault fault) {
    }

    private static final class FaultDispatcher extends Dispatcher {

        private final KubernetesMixedDispatcher delegate;
        private final List<QueuedFaults> queued = new CopyOnWriteArrayList<>();
        private final List<Request> log = new CopyOnWriteArrayList<>();
        private final AtomicInteger injected = new AtomicInteger();
        private volatile RandomFaults random;
        private volatile boolean keepOnShutdown;

        FaultDispatcher(KubernetesMixedDispatcher delegate) {
            this.delegate = delegate;
        }

        @Override
        public MockResponse dispatch(RecordedRequest recorded) {
            // getBytes() leaves the buffer unread for the CRUD store (getUtf8Body() would drain it).
            String body = recorded.getBody() == null || recorded.getBody().size() == 0 ? null
                    : new String(recorded.getBody().getBytes(), java.nio.charset.StandardCharsets.UTF_8);
            Request request = new Request(recorded.getMethod(), recorded.getPath(), recorded.getHeader("Content-Type"), body, false);
            Fault fault = pick(request);
            log.add(fault == null ? request
                    : new Request(request.method(), request.path(), request.contentType(), request.body(), true));
            if (fault == null) {
                return delegate.dispatch(recorded);
            }
            injected.incrementAndGet();
            LOGGER.debug("fault injected method={} path={} code={} delayMs={}", request.method(), request.path(), fault.code(),
                    fault.delay().toMillis());
            return response(fault);
        }

        private Fault pick(Request request) {
            for (QueuedFaults q : queued) {
                if (q.which().test(request) && q.remaining().getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                    return q.fault();
                }
            }
            RandomFaults r = random;
            if (r != null && r.which().test(request)) {
                synchronized (r.random()) {
                    if (r.random().nextDouble() < r.rate()) {
                        return r.faults().get(r.random().nextInt(r.faults().size()));
                    }
                }
            }
            return null;
        }

        private static MockResponse response(Fault fault) {
            String reason = switch (fault.code()) {
                case 404 -> "NotFound";
                case 409 -> "Conflict";
                case 422 -> "Invalid";
                case 429 -> "TooManyRequests";
                case 504 -> "Timeout";
                case 503 -> "ServiceUnavailable";
                default -> "InternalError";
            };
            String details = fault.retryAfterSeconds() > 0 ? ",\"details\":{\"retryAfterSeconds\":" + fault.retryAfterSeconds() + "}" : "";
            String status = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
                    + "\"message\":\"injected fault " + fault.code() + "\",\"reason\":\"" + reason + "\"" + details
                    + ",\"code\":" + fault.code() + "}";
            MockResponse response = new MockResponse().setResponseCode(fault.code())
                    .setHeader("Content-Type", "application/json").setBody(status);
            if (fault.retryAfterSeconds() > 0) {
                response.setHeader("Retry-After", fault.retryAfterSeconds());
            }
            if (!fault.delay().isZero()) {
                response.setBodyDelay(fault.delay());
            }
            return response;
        }

        @Override
        public void shutdown() {
            // goDown() stops the listener but keeps the store for comeBack().
            if (!keepOnShutdown) {
                delegate.shutdown();
            }
        }

        @Override
        public void releaseResources() {
            if (!keepOnShutdown) {
                delegate.releaseResources();
            }
        }
    }
}
