package io.devhealth.simulators.realkube;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** The JSON control endpoint of one of the Go test helpers, on loopback. */
final class ControlEndpoint {

    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String base;

    ControlEndpoint(String hostPort) {
        this.base = "http://" + hostPort;
    }

    <T> T get(String path, TypeReference<T> type) {
        return send(HttpRequest.newBuilder(URI.create(base + path)).GET(), type);
    }

    <T> T send(String method, String path, Object body, TypeReference<T> type) {
        try {
            return send(HttpRequest.newBuilder(URI.create(base + path))
                    .header("Content-Type", "application/json")
                    .method(method, HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body))), type);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private <T> T send(HttpRequest.Builder request, TypeReference<T> type) {
        try {
            HttpResponse<byte[]> response = http.send(request.timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            if (response.statusCode() / 100 != 2) {
                throw new IllegalStateException(response.request().method() + " " + response.uri() + " answered "
                        + response.statusCode() + ": " + new String(response.body(), java.nio.charset.StandardCharsets.UTF_8));
            }
            return JSON.readValue(response.body(), type);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
