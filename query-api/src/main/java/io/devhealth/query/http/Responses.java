package io.devhealth.query.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Response;

/** Writes the query API's answers: JSON documents and errors, plain text for probes; headers only for HEAD. */
public final class Responses {

    public static final String JSON_TYPE = "application/json";
    private static final ObjectMapper JSON = JsonMapper.builder().build();

    private Responses() {}

    public static void json(Exchange exchange, int status, Object body) throws IOException {
        send(exchange, status, JSON.writeValueAsBytes(body), JSON_TYPE);
    }

    /** An error as {@code {"status":…,"message":…}}; the message must already be safe to show (see {@link Excerpt}). */
    public static void error(Exchange exchange, int status, String message) {
        try {
            json(exchange, status, new ErrorView(status, message));
        } catch (IOException e) {
            throw new IllegalStateException("an error document always serializes", e);
        }
    }

    /** A 403 that names the permission the caller lacks ({@code missing}: verb, group, resource, namespace, name). */
    public static void forbidden(Exchange exchange, String message, Permission missing) {
        try {
            json(exchange, 403, new ErrorView(403, message, missing));
        } catch (IOException e) {
            throw new IllegalStateException("an error document always serializes", e);
        }
    }

    public static void text(Exchange exchange, int status, String body, String contentType) {
        send(exchange, status, body.getBytes(StandardCharsets.UTF_8), contentType);
    }

    static void send(Exchange exchange, int status, byte[] body, String contentType) {
        Response response = exchange.response();
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
        // Answers are about live state and may be confidential: never cached, never sniffed as something else.
        response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-store");
        response.getHeaders().put("X-Content-Type-Options", "nosniff");
        if ("HEAD".equals(exchange.method()) || body.length == 0) {
            exchange.callback().succeeded();
            return;
        }
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        response.write(true, ByteBuffer.wrap(body), exchange.callback());
    }
}
