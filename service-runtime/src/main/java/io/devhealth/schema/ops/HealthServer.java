package io.devhealth.schema.ops;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A service's small operations HTTP endpoint (JDK {@link HttpServer}, one thread):
 * {@code /metrics} (Prometheus text), {@code /healthz} (liveness) and {@code /readyz} (readiness).
 * Probes answer 200 or 503 with a one-line reason.
 */
public final class HealthServer implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(HealthServer.class);

    /** A probe's verdict. */
    public record Check(boolean ok, String detail) {
        public static Check ok(String detail) {
            return new Check(true, detail);
        }

        public static Check failed(String detail) {
            return new Check(false, detail);
        }
    }

    private final HttpServer server;

    private HealthServer(HttpServer server) {
        this.server = server;
    }

    /**
     * @param port 0 for any free port
     * @param metrics the Prometheus exposition text
     */
    public static HealthServer start(String host, int port, Supplier<String> metrics, Supplier<Check> liveness,
                                     Supplier<Check> readiness) {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 16);
            server.createContext("/metrics", exchange -> respond(exchange, 200, "text/plain; version=0.0.4; charset=utf-8",
                    metrics.get()));
            server.createContext("/healthz", exchange -> probe(exchange, liveness.get()));
            server.createContext("/readyz", exchange -> probe(exchange, readiness.get()));
            server.setExecutor(Executors.newSingleThreadExecutor(runnable -> {
                Thread thread = new Thread(runnable, "devhealth-http");
                thread.setDaemon(true);
                return thread;
            }));
            server.start();
            LOGGER.info("http endpoint started address={}", server.getAddress());
            return new HealthServer(server);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + host + ":" + port, e);
        }
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private static void probe(HttpExchange exchange, Check check) throws IOException {
        respond(exchange, check.ok() ? 200 : 503, "text/plain; charset=utf-8", (check.ok() ? "ok: " : "failed: ") + check.detail() + "\n");
    }

    private static void respond(HttpExchange exchange, int status, String contentType, String body) throws IOException {
        try (exchange) {
            if (!"GET".equals(exchange.getRequestMethod()) && !"HEAD".equals(exchange.getRequestMethod())) {
                exchange.sendResponseHeaders(405, -1);
                return;
            }
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", contentType);
            boolean head = "HEAD".equals(exchange.getRequestMethod());
            exchange.sendResponseHeaders(status, head ? -1 : bytes.length);
            if (!head) {
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(bytes);
                }
            }
        }
    }

    @Override
    public void close() {
        server.stop(0);
        if (server.getExecutor() instanceof java.util.concurrent.ExecutorService executor) {
            executor.shutdownNow();
        }
    }
}
