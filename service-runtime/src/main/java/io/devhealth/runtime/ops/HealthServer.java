package io.devhealth.runtime.ops;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A service's small operations HTTP endpoint: {@code /metrics} (Prometheus text), {@code /healthz}
 * (liveness) and {@code /readyz} (readiness). Probes answer 200 or 503 with a one-line reason.
 *
 * <p>On {@link JettyServers} with {@link HttpLimits}: a slow or stalled client holds a connection
 * (never a thread) until the request time limit or idle timeout closes it, and the connection cap
 * bounds how many it holds, so the kubelet's probes keep being answered.
 */
public final class HealthServer implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(HealthServer.class);
    /** Probes and a scrape are quick; a few threads answer them while others wait on slow clients' writes. */
    static final int THREADS = 6;
    static final String METRICS_TYPE = "text/plain; version=0.0.4; charset=utf-8";
    private static final String PROBE_TYPE = "text/plain; charset=utf-8";

    /** A probe's verdict. */
    public record Check(boolean ok, String detail) {
        public static Check ok(String detail) {
            return new Check(true, detail);
        }

        public static Check failed(String detail) {
            return new Check(false, detail);
        }
    }

    private final Server server;

    private HealthServer(Server server) {
        this.server = server;
    }

    /** {@link #start(String, int, HttpLimits, Supplier, Supplier, Supplier)} with the default limits. */
    public static HealthServer start(String host, int port, Supplier<String> metrics, Supplier<Check> liveness,
                                     Supplier<Check> readiness) {
        return start(host, port, HttpLimits.DEFAULT, metrics, liveness, readiness);
    }

    /**
     * @param port 0 for any free port
     * @param metrics the Prometheus exposition text
     */
    public static HealthServer start(String host, int port, HttpLimits limits, Supplier<String> metrics, Supplier<Check> liveness,
                                     Supplier<Check> readiness) {
        Server server = JettyServers.bind("devhealth-http", host, port, limits, THREADS, null);
        server.setHandler(new Endpoints(metrics, liveness, readiness));
        JettyServers.start(server);
        LOGGER.info("http endpoint started host={} port={} maxConnections={} requestTimeoutMs={} idleTimeoutMs={}", host,
                JettyServers.port(server), limits.maxConnections(), limits.requestTimeout().toMillis(), limits.idleTimeout().toMillis());
        return new HealthServer(server);
    }

    public int port() {
        return JettyServers.port(server);
    }

    @Override
    public void close() {
        JettyServers.stop(server);
    }

    private static final class Endpoints extends Handler.Abstract {
        private final Supplier<String> metrics;
        private final Supplier<Check> liveness;
        private final Supplier<Check> readiness;

        Endpoints(Supplier<String> metrics, Supplier<Check> liveness, Supplier<Check> readiness) {
            this.metrics = metrics;
            this.liveness = liveness;
            this.readiness = readiness;
        }

        @Override
        public boolean handle(Request request, Response response, Callback callback) {
            String method = request.getMethod();
            if (!"GET".equals(method) && !"HEAD".equals(method)) {
                response.getHeaders().put(HttpHeader.ALLOW, "GET, HEAD");
                respond(request, response, callback, 405, PROBE_TYPE, "");
                return true;
            }
            switch (Request.getPathInContext(request)) {
                case "/metrics" -> respond(request, response, callback, 200, METRICS_TYPE, metrics.get());
                case "/healthz" -> probe(request, response, callback, liveness.get());
                case "/readyz" -> probe(request, response, callback, readiness.get());
                default -> respond(request, response, callback, 404, PROBE_TYPE, "no such endpoint\n");
            }
            return true;
        }

        private static void probe(Request request, Response response, Callback callback, Check check) {
            respond(request, response, callback, check.ok() ? 200 : 503, PROBE_TYPE,
                    (check.ok() ? "ok: " : "failed: ") + check.detail() + "\n");
        }

        private static void respond(Request request, Response response, Callback callback, int status, String contentType, String body) {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            response.setStatus(status);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
            if ("HEAD".equals(request.getMethod()) || bytes.length == 0) {
                callback.succeeded();
                return;
            }
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, bytes.length);
            response.write(true, ByteBuffer.wrap(bytes), callback);
        }
    }
}
