package io.devhealth.query.http;

/**
 * Keeps the query API read-only and its requests small, before authentication looks at them:
 * methods other than GET and HEAD get 405 with {@code Allow}; a request body (no endpoint takes one)
 * 413; a target longer than {@link #MAX_URI_LENGTH} 414; headers larger than {@link #MAX_HEADER_BYTES}
 * together 431. The server itself refuses a request line and headers beyond a larger bound before
 * they reach this guard.
 */
public final class RequestGuard {

    static final String ALLOW = "GET, HEAD";
    public static final int MAX_URI_LENGTH = 4096;
    static final int MAX_HEADER_BYTES = 16 * 1024;

    /** Whether the request may go on; if not, it has been answered. */
    public boolean admits(Exchange exchange) {
        String method = exchange.method();
        if (!"GET".equals(method) && !"HEAD".equals(method)) {
            exchange.setHeader("Allow", ALLOW);
            return reject(exchange, 405, "the query API is read-only: only " + ALLOW + " are allowed");
        }
        if (exchange.targetLength() > MAX_URI_LENGTH) {
            return reject(exchange, 414, "request target longer than " + MAX_URI_LENGTH + " characters");
        }
        if (headerBytes(exchange) > MAX_HEADER_BYTES) {
            return reject(exchange, 431, "request headers larger than " + MAX_HEADER_BYTES + " bytes");
        }
        if (hasBody(exchange)) {
            return reject(exchange, 413, "requests to the query API carry no body");
        }
        return true;
    }

    private static long headerBytes(Exchange exchange) {
        long total = 0;
        for (org.eclipse.jetty.http.HttpField header : exchange.request().getHeaders()) {
            total += header.getName().length() + (header.getValue() == null ? 0 : header.getValue().length()) + 4;
        }
        return total;
    }

    private static boolean hasBody(Exchange exchange) {
        String length = exchange.header("Content-Length");
        return exchange.header("Transfer-Encoding") != null || (length != null && !length.strip().equals("0"));
    }

    private static boolean reject(Exchange exchange, int status, String message) {
        // The body is not read: close the connection rather than parse what the caller may still send.
        exchange.setHeader("Connection", "close");
        Responses.error(exchange, status, message);
        return false;
    }
}
