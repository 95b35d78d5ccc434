package io.devhealth.query;

import io.devhealth.query.access.QuerySecurityConfig;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.runtime.ops.HttpLimits;
import io.devhealth.testkit.http.Slowloris;
import io.devhealth.testkit.time.MutableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A slowloris against the query API: 50 connections each sending a request one byte at a time. The
 * probes and the queries keep answering meanwhile, and the server closes the slow connections once
 * their request has taken longer than the request time limit.
 */
class QueryServerSlowlorisIT {

    private static final Duration ANSWER_BOUND = Duration.ofSeconds(2);
    /** Short, so that the test sees the slow connections closed; the default is 10 s. */
    private static final HttpLimits LIMITS = new HttpLimits(Duration.ofSeconds(2), Duration.ofSeconds(30), 256);

    private final MutableClock clock = MutableClock.at("2026-11-29T10:00:00Z");
    private QueryServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void shouldKeepAnsweringProbesAndQueriesAndCloseSlowConnectionsAfterTheTimeLimit() throws Exception {
        server = QueryServer.bind("127.0.0.1", 0, clock, QuerySecurityConfig.withoutAuthentication(), LIMITS);
        HostInfo self = new HostInfo("127.0.0.1", server.port());
        server.serve(new FakeCluster(self, Map.of("node-a", self), List.of(), Set.of()), () -> "devhealth_up 1\n", new SimpleMeterRegistry());
        HttpClient http = HttpClient.newBuilder().connectTimeout(ANSWER_BOUND).build();

        try (Slowloris attack = Slowloris.open(server.port(), 50, Duration.ofMillis(200), Duration.ofSeconds(60))) {
            // The JDK server gave each of its 4 threads to a slow connection: these timed out.
            for (int i = 0; i < 5; i++) {
                assertThat(get(http, "/healthz").statusCode()).isEqualTo(200);
                assertThat(get(http, "/v1/nodes/node-a/devices").statusCode()).isEqualTo(200);
            }
            // Closed between one and one and a half limits after they opened; 10 s leaves room for a slow machine.
            attack.awaitAllClosedByServer(Duration.ofSeconds(10));
            assertThat(get(http, "/healthz").statusCode()).isEqualTo(200);
        }
    }

    private HttpResponse<String> get(HttpClient http, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).timeout(ANSWER_BOUND).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
