package io.devhealth.processor.query;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/** Writes the query API's answers: JSON documents and errors, plain text for probes; headers only for HEAD. */
final class Responses {

    static final String JSON_TYPE = "application/json";
    private static final ObjectMapper JSON = JsonMapper.builder().build();

    private Responses() {}

    static void json(HttpExchange exchange, int status, Object body) throws IOException {
        send(exchange, status, JSON.writeValueAsBytes(body), JSON_TYPE);
    }

    /** An error as {@code {"status":…,"message":…}}; the message must already be safe to show (see {@link Excerpt}). */
    static void error(HttpExchange exchange, int status, String message) throws IOException {
        json(exchange, status, new QueryViews.Error(status, message));
    }

    static void text(HttpExchange exchange, int status, String body, String contentType) throws IOException {
        send(exchange, status, body.getBytes(StandardCharsets.UTF_8), contentType);
    }

    static void send(HttpExchange exchange, int status, byte[] body, String contentType) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", contentType);
        // Answers are about live state and may be confidential: never cached, never sniffed as something else.
        exchange.getResponseHeaders().set("Cache-Control", "no-store");
        exchange.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
        if ("HEAD".equals(exchange.getRequestMethod())) {
            exchange.sendResponseHeaders(status, -1);
            exchange.close();
            return;
        }
        exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }
}
