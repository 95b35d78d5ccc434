package io.devhealth.runtime.ops;

import java.time.Duration;
import java.util.Objects;

/**
 * How much a service's HTTP endpoint gives one client: how long a request may take to arrive, how
 * long a connection may stall, and how many connections it holds at once.
 *
 * @param requestTimeout a connection's request line and headers must have arrived this long after it
 *                       opened (its first request) or after its first byte (later ones); otherwise the
 *                       connection is closed. Bounds a slowloris, which sends a request a byte at a time.
 * @param idleTimeout a connection that moves no byte for this long is closed: while a request arrives,
 *                    while a response is written (a client that stops reading), or between requests
 * @param maxConnections connections held at once; beyond it the server stops accepting until one closes
 */
public record HttpLimits(Duration requestTimeout, Duration idleTimeout, int maxConnections) {

    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(10);
    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(30);
    public static final int DEFAULT_MAX_CONNECTIONS = 256;
    public static final HttpLimits DEFAULT = new HttpLimits(DEFAULT_REQUEST_TIMEOUT, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_CONNECTIONS);

    public HttpLimits {
        Objects.requireNonNull(requestTimeout, "requestTimeout");
        Objects.requireNonNull(idleTimeout, "idleTimeout");
        if (requestTimeout.isNegative() || requestTimeout.isZero() || idleTimeout.isNegative() || idleTimeout.isZero()) {
            throw new IllegalArgumentException("HTTP time limits must be positive: request=" + requestTimeout + " idle=" + idleTimeout);
        }
        if (maxConnections < 1) {
            throw new IllegalArgumentException("maxConnections must be at least 1, got " + maxConnections);
        }
    }
}
