package io.devhealth.query;

import io.devhealth.query.access.QuerySecurityConfig;
import io.devhealth.query.routing.StandbyReads;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.testkit.time.MutableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Reads while a key's active instance rebalances, on two {@link QueryServer}s over loopback ({@link FakeCluster}: node-a
 * is A's, node-b and the pod B's, and no standby copies). Kafka Streams then refuses A's active-only reads, though A
 * still holds node-a's task; with standby reads on, A's copy read as it stands answers, marked stale, whether A or B
 * is asked; with them off, and when A is gone, only "retry shortly".
 */
class RebalanceReadsIT {

    private static final String NODE_A = "/v1/nodes/node-a/devices";

    private final MutableClock clock = MutableClock.at("2026-11-29T10:00:00Z");
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final List<QueryServer> servers = new ArrayList<>();
    private QueryServer a;
    private QueryServer b;
    private FakeCluster clusterA;
    private final SimpleMeterRegistry metersB = new SimpleMeterRegistry();

    @AfterEach
    void stop() {
        servers.forEach(QueryServer::close);
    }

    private void startPair(StandbyReads reads) {
        a = QueryServer.bind("127.0.0.1", 0, clock, QuerySecurityConfig.withoutAuthentication());
        b = QueryServer.bind("127.0.0.1", 0, clock, QuerySecurityConfig.withoutAuthentication());
        servers.add(a);
        servers.add(b);
        HostInfo hostA = new HostInfo("127.0.0.1", a.port());
        HostInfo hostB = new HostInfo("127.0.0.1", b.port());
        Map<String, HostInfo> owners = Map.of("node-a", hostA, "node-b", hostB);
        clusterA = new FakeCluster(hostA, owners, List.of(hostB), Set.of());
        a.serve(clusterA, () -> "", new SimpleMeterRegistry(), reads);
        b.serve(new FakeCluster(hostB, owners, List.of(hostA), Set.of("ml/train-0")), () -> "", metersB, reads);
    }

    @Test
    void shouldAnswerFromTheActiveCopyHereAsItStandsWhileItsThreadRebalances() throws Exception {
        startPair(StandbyReads.DEFAULT);
        assertThat(get(a, NODE_A).headers().firstValue(StandbyReads.STALE_HEADER)).as("from the running active copy").isEmpty();

        clusterA.rebalance();
        HttpResponse<String> answer = get(a, NODE_A);
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        assertThat(answer.body()).contains("\"node\":\"node-a\"");
        assertThat(answer.headers().firstValue(StandbyReads.STALE_HEADER)).as("read as it stands").contains("true");
    }

    @Test
    void shouldAskTheActiveInstanceForItsCopyAsItStandsWhenItSaysRetryShortly() throws Exception {
        startPair(StandbyReads.DEFAULT);
        clusterA.rebalance();

        HttpResponse<String> answer = get(b, NODE_A);
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        assertThat(answer.body()).contains("\"node\":\"node-a\"");
        assertThat(answer.headers().firstValue(StandbyReads.STALE_HEADER)).contains("true");
        assertThat(metersB.get("devhealth.query.standby.reads").tag("outcome", "answered").counter().count()).isEqualTo(1.0);
        assertThat(get(b, "/v1/nodes/node-b/devices").headers().firstValue(StandbyReads.STALE_HEADER)).as("B's own node").isEmpty();
    }

    @Test
    void shouldOnlySayRetryShortlyWithoutStandbyReads() throws Exception {
        startPair(StandbyReads.OFF);
        clusterA.rebalance();

        assertThat(get(a, NODE_A).statusCode()).isEqualTo(503);
        HttpResponse<String> viaB = get(b, NODE_A);
        assertThat(viaB.statusCode()).isEqualTo(503);
        assertThat(viaB.body()).contains("REBALANCING");
    }

    @Test
    void shouldSayRetryShortlyWhenTheActiveInstanceIsGoneAndNoOtherCopyIsKept() throws Exception {
        startPair(StandbyReads.DEFAULT);
        a.close();

        HttpResponse<String> answer = get(b, NODE_A);
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(503);
        assertThat(answer.body()).contains("did not answer");
        assertThat(metersB.get("devhealth.query.standby.reads").tag("outcome", "unanswered").counter().count()).isEqualTo(1.0);
    }

    private HttpResponse<String> get(QueryServer server, String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(20)).GET().build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }
}
