package io.devhealth.testkit.http;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A slowloris against a local HTTP port: many connections, each sending the start of a request one
 * byte per interval and never finishing it. Only loopback targets; it stops by itself after
 * {@code maxDuration} and on {@link #close()}.
 *
 * <p>A connection counts as closed by the server when a read sees end of stream or a reset, or a
 * write fails: what a client sees when the server gives up on it.
 */
public final class Slowloris implements AutoCloseable {

    /** A request line and a header that never ends: the server can neither answer nor reject it yet. */
    private static final byte[] PARTIAL_REQUEST = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
            .getBytes(StandardCharsets.US_ASCII);

    private final List<Connection> connections = new ArrayList<>();
    private final ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "slowloris");
        thread.setDaemon(true);
        return thread;
    });

    private Slowloris() {}

    /**
     * Opens {@code count} connections to {@code 127.0.0.1:port} and sends each one more byte of a
     * request every {@code interval}, for at most {@code maxDuration}.
     */
    public static Slowloris open(int port, int count, Duration interval, Duration maxDuration) throws IOException {
        Slowloris attack = new Slowloris();
        try {
            for (int i = 0; i < count; i++) {
                Socket socket = new Socket();
                socket.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
                socket.setSoTimeout(1);
                attack.connections.add(new Connection(socket));
            }
        } catch (IOException e) {
            attack.close();
            throw e;
        }
        attack.trickle.scheduleWithFixedDelay(attack::sendOneByteEach, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
        attack.trickle.schedule(attack::close, maxDuration.toMillis(), TimeUnit.MILLISECONDS);
        return attack;
    }

    private synchronized void sendOneByteEach() {
        for (Connection connection : connections) {
            connection.sendNextByte();
        }
    }

    /** How many connections are open. */
    public int count() {
        return connections.size();
    }

    /** How many of the connections the server has closed (checked now, without blocking). */
    public synchronized int closedByServer() {
        int closed = 0;
        for (Connection connection : connections) {
            if (connection.closedByServer()) {
                closed++;
            }
        }
        return closed;
    }

    /** Waits until the server has closed every connection; fails after {@code atMost}. */
    public void awaitAllClosedByServer(Duration atMost) throws InterruptedException {
        long deadline = System.nanoTime() + atMost.toNanos();
        while (closedByServer() < count()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the server closed " + closedByServer() + " of " + count() + " slow connections within " + atMost);
            }
            Thread.sleep(250);
        }
    }

    @Override
    public synchronized void close() {
        trickle.shutdownNow();
        for (Connection connection : connections) {
            connection.close();
        }
    }

    private static final class Connection {
        private final Socket socket;
        private int sent;
        private boolean closed;

        Connection(Socket socket) {
            this.socket = socket;
        }

        void sendNextByte() {
            if (closed || sent >= PARTIAL_REQUEST.length) {
                return;
            }
            try {
                OutputStream out = socket.getOutputStream();
                out.write(PARTIAL_REQUEST[sent++]);
                out.flush();
            } catch (IOException e) {
                closed = true;
            }
        }

        boolean closedByServer() {
            if (closed) {
                return true;
            }
            try {
                InputStream in = socket.getInputStream();
                // The server may answer (400, 408) before it closes: anything read, then end of stream, is a close.
                while (true) {
                    int read = in.read();
                    if (read < 0) {
                        closed = true;
                        return true;
                    }
                }
            } catch (SocketTimeoutException e) {
                return false;
            } catch (IOException e) {
                closed = true;
                return true;
            }
        }

        void close() {
            try {
                socket.close();
            } catch (IOException e) {
                // closing a test socket
            }
        }
    }
}
