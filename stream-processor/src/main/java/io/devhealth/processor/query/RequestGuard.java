package io.devhealth.processor.query;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * Keeps the query API read-only and its requests small, before authentication looks at them:
 * methods other than GET and HEAD get 405 with {@code Allow}; a request body (no endpoint takes one)
 * 413; a target longer than {@link #MAX_URI_LENGTH} 414; headers larger than {@link #MAX_HEADER_BYTES}
 * together 431. The JDK server itself caps the number of header lines ({@code sun.net.httpserver.maxReqHeaders}, 200).
 */
final class RequestGuard extends Filter {

    static final String ALLOW = "GET, HEAD";
    static final int MAX_URI_LENGTH = 4096;
    static final int MAX_HEADER_BYTES = 16 * 1024;

    @Override
    public void doFilter(HttpExchange exchange, Chain chain) throws IOException {
        String method = exchange.getRequestMethod();
        if (!"GET".equals(method) && !"HEAD".equals(method)) {
            exchange.getResponseHeaders().set("Allow", ALLOW);
            reject(exchange, 405, "the query API is read-only: only " + ALLOW + " are allowed");
            return;
        }
        if (exchange.getRequestURI().toString().length() > MAX_URI_LENGTH) {
            reject(exchange, 414, "request target longer than " + MAX_URI_LENGTH + " characters");
            return;
        }
        if (headerBytes(exchange) > MAX_HEADER_BYTES) {
            reject(exchange, 431, "request headers larger than " + MAX_HEADER_BYTES + " bytes");
            return;
        }
        if (hasBody(exchange)) {
            reject(exchange, 413, "requests to the query API carry no body");
            return;
        }
        chain.doFilter(exchange);
    }

    private static long headerBytes(HttpExchange exchange) {
        long total = 0;
        for (Map.Entry<String, List<String>> header : exchange.getRequestHeaders().entrySet()) {
            for (String value : header.getValue()) {
                total += header.getKey().length() + value.length() + 4;
            }
        }
        return total;
    }

    private static boolean hasBody(HttpExchange exchange) {
        String length = exchange.getRequestHeaders().getFirst("Content-Length");
        return exchange.getRequestHeaders().containsKey("Transfer-Encoding") || (length != null && !length.strip().equals("0"));
    }

    private static void reject(HttpExchange exchange, int status, String message) throws IOException {
        // The body is not read: close the connection rather than parse what the caller may still send.
        exchange.getResponseHeaders().set("Connection", "close");
        Responses.error(exchange, status, message);
    }

    @Override
    public String description() {
        return "read-only methods and request size limits";
    }
}
