package io.devhealth.runtime.ops;

import java.io.IOException;
import java.io.UncheckedIOException;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.server.ConnectionFactory;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;

/**
 * The one way devhealth's services make an HTTP server: Jetty's core server (HTTP/1.1, no servlets)
 * with a bounded thread pool, {@link HttpLimits} applied (connection cap, idle timeout, request time
 * limit) and nothing about itself in the responses. The port is bound at once, so that a port 0
 * resolves before the server serves (the processor advertises it); {@link Server#start()} serves.
 */
public final class JettyServers {

    /** Request line plus headers Jetty accepts at all; callers may check tighter limits and answer them themselves. */
    static final int MAX_REQUEST_HEADER_BYTES = 32 * 1024;

    private JettyServers() {}

    /**
     * A server bound to {@code host:port}, not started.
     *
     * @param name names its threads
     * @param maxThreads the most worker threads (acceptor and selector included)
     * @param tls HTTPS only when set; plain HTTP when null
     */
    public static Server bind(String name, String host, int port, HttpLimits limits, int maxThreads, SslContextFactory.Server tls) {
        QueuedThreadPool threads = new QueuedThreadPool(maxThreads, Math.min(2, maxThreads));
        threads.setName(name);
        threads.setDaemon(true);
        // No threads parked in reserve: the pool is small and every thread should be able to serve.
        threads.setReservedThreads(0);
        Server server = new Server(threads);
        ScheduledExecutorScheduler scheduler = new ScheduledExecutorScheduler(name + "-scheduler", true);
        server.addBean(scheduler);

        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendXPoweredBy(false);
        http.setRequestHeaderSize(MAX_REQUEST_HEADER_BYTES);
        ConnectionFactory[] factories;
        if (tls == null) {
            factories = new ConnectionFactory[] {new HttpConnectionFactory(http)};
        } else {
            // Host names are the client's to check against the certificate; the server has one certificate to offer.
            SecureRequestCustomizer secure = new SecureRequestCustomizer(false, false, -1, false);
            http.addCustomizer(secure);
            factories = new ConnectionFactory[] {new SslConnectionFactory(tls, HttpVersion.HTTP_1_1.asString()),
                    new HttpConnectionFactory(http)};
        }
        ServerConnector connector = new ServerConnector(server, null, scheduler, null, 1, 1, factories);
        connector.setHost(host);
        connector.setPort(port);
        connector.setIdleTimeout(limits.idleTimeout().toMillis());
        connector.addBean(new RequestDeadline(limits.requestTimeout(), scheduler, System::currentTimeMillis));
        server.addConnector(connector);
        server.addBean(new NetworkConnectionLimit(limits.maxConnections(), connector));
        server.setStopTimeout(0);
        try {
            connector.open();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + host + ":" + port, e);
        }
        return server;
    }

    /** The port {@code server} listens on (the bound one when 0 was asked for). */
    public static int port(Server server) {
        return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }

    /** Starts {@code server}; a failure to start is not expected once the port is bound. */
    public static void start(Server server) {
        try {
            server.start();
        } catch (Exception e) {
            throw new IllegalStateException("cannot start the HTTP server on port " + port(server), e);
        }
    }

    /** Stops {@code server} at once, closing its connections. */
    public static void stop(Server server) {
        try {
            server.stop();
        } catch (Exception e) {
            throw new IllegalStateException("cannot stop the HTTP server on port " + port(server), e);
        }
    }
}
