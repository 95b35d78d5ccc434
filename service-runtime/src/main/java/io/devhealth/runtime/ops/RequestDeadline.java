package io.devhealth.runtime.ops;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.util.component.AbstractLifeCycle;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes HTTP connections whose request does not arrive in time: the first request's line and headers
 * must be complete within the limit after the connection opened (the TLS handshake included), a later
 * request's within the limit after its first byte was seen.
 *
 * <p>Jetty's idle timeout alone does not stop a slowloris: every byte restarts it. Jetty parses headers
 * without holding a thread, so a slow request costs a connection and a buffer, not a worker; this
 * rule gives the connection back. A sweep every half limit looks at each connection's count of
 * requests whose headers completed and of bytes read: a connection that has read bytes of a request
 * not yet complete at three sweeps in a row (at least one limit long) is closed, so a request is given
 * between one and one and a half limits. Connections between requests are left to the idle timeout.
 */
final class RequestDeadline extends AbstractLifeCycle implements Connection.Listener {

    private static final Logger LOGGER = LoggerFactory.getLogger(RequestDeadline.class);

    private final Duration limit;
    private final Scheduler scheduler;
    private final LongSupplier nowMillis;
    private final Map<Connection, Progress> open = new ConcurrentHashMap<>();
    private volatile Scheduler.Task sweep;

    RequestDeadline(Duration limit, Scheduler scheduler, LongSupplier nowMillis) {
        this.limit = limit;
        this.scheduler = scheduler;
        this.nowMillis = nowMillis;
    }

    @Override
    public void onOpened(Connection connection) {
        // Only the HTTP layer counts requests; a TLS layer below it answers -1 and is closed with it.
        if (connection.getMessagesIn() >= 0) {
            open.put(connection, new Progress());
        }
    }

    @Override
    public void onClosed(Connection connection) {
        open.remove(connection);
    }

    @Override
    protected void doStart() {
        scheduleSweep();
    }

    @Override
    protected void doStop() {
        Scheduler.Task task = sweep;
        if (task != null) {
            task.cancel();
        }
        open.clear();
    }

    private void scheduleSweep() {
        if (isRunning() || isStarting()) {
            sweep = scheduler.schedule(this::sweepOnce, Math.max(1, limit.toMillis() / 2), TimeUnit.MILLISECONDS);
        }
    }

    private void sweepOnce() {
        try {
            long now = nowMillis.getAsLong();
            open.forEach((connection, progress) -> {
                if (progress.overdue(connection, now, limit.toMillis())) {
                    LOGGER.debug("closing a connection whose request did not arrive in time remote={} limitMs={}",
                            connection.getEndPoint().getRemoteSocketAddress(), limit.toMillis());
                    open.remove(connection);
                    connection.getEndPoint().close();
                }
            });
        } finally {
            scheduleSweep();
        }
    }

    /** Number of connections being watched (for tests). */
    int watched() {
        return open.size();
    }

    /** What one sweep last saw of a connection; touched by the sweep only. */
    private static final class Progress {
        private long requests;
        private long bytesAtLastRequest;
        private int sweepsPending;

        boolean overdue(Connection connection, long now, long limitMillis) {
            long requestsNow = connection.getMessagesIn();
            long bytesNow = connection.getBytesIn();
            if (requestsNow == 0) {
                return now - connection.getCreatedTimeStamp() >= limitMillis;
            }
            if (requestsNow != requests) {
                requests = requestsNow;
                bytesAtLastRequest = bytesNow;
                sweepsPending = 0;
                return false;
            }
            if (bytesNow > bytesAtLastRequest) {
                return ++sweepsPending >= 3;
            }
            sweepsPending = 0;
            return false;
        }
    }
}
