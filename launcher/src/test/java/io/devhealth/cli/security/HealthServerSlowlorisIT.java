package io.devhealth.cli.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.runtime.ops.HealthServer;
import io.devhealth.runtime.ops.HttpLimits;
import io.devhealth.testkit.http.Slowloris;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A slowloris against the collector's and the sink's operations endpoint: 50 connections each sending
 * a request one byte at a time. The kubelet's probes and Prometheus' scrape keep being answered, and
 * the slow connections are closed once their request has taken longer than the request time limit.
 */
class HealthServerSlowlorisIT {

    private static final Duration ANSWER_BOUND = Duration.ofSeconds(2);
    /** Short, so that the test sees the slow connections closed; the default is 10 s. */
    private static final HttpLimits LIMITS = new HttpLimits(Duration.ofSeconds(2), Duration.ofSeconds(30), 256);

    @Test
    void shouldKeepAnsweringProbesAndCloseSlowConnectionsAfterTheTimeLimit() throws Exception {
        try (HealthServer server = HealthServer.start("127.0.0.1", 0, LIMITS, () -> "devhealth_up 1\n",
                () -> HealthServer.Check.ok("running"), () -> HealthServer.Check.ok("ready"));
             Slowloris attack = Slowloris.open(server.port(), 50, Duration.ofMillis(200), Duration.ofSeconds(60))) {
            HttpClient http = HttpClient.newBuilder().connectTimeout(ANSWER_BOUND).build();
            // The JDK server this replaced had one thread, which the first slow connection took: these timed out.
            for (int i = 0; i < 5; i++) {
                assertThat(get(http, server, "/healthz").body()).isEqualTo("ok: running\n");
                assertThat(get(http, server, "/readyz").statusCode()).isEqualTo(200);
                assertThat(get(http, server, "/metrics").body()).contains("devhealth_up 1");
            }
            attack.awaitAllClosedByServer(Duration.ofSeconds(10));
            assertThat(get(http, server, "/healthz").statusCode()).isEqualTo(200);
        }
    }

    @Test
    void shouldAnswerOnlyItsEndpointsAndOnlyReads() throws Exception {
        try (HealthServer server = HealthServer.start("127.0.0.1", 0, LIMITS, () -> "devhealth_up 1\n",
                () -> HealthServer.Check.ok("running"), () -> HealthServer.Check.failed("not yet"))) {
            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<String> metrics = get(http, server, "/metrics");
            assertThat(metrics.headers().firstValue("Content-Type")).hasValue("text/plain; version=0.0.4; charset=utf-8");
            assertThat(get(http, server, "/readyz").statusCode()).isEqualTo(503);
            assertThat(get(http, server, "/readyz").body()).isEqualTo("failed: not yet\n");
            assertThat(get(http, server, "/nothing").statusCode()).isEqualTo(404);
            HttpResponse<String> post = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/healthz"))
                    .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(post.statusCode()).isEqualTo(405);
            assertThat(metrics.headers().firstValue("Server")).isEmpty();
        }
    }

    private static HttpResponse<String> get(HttpClient http, HealthServer server, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).timeout(ANSWER_BOUND).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
