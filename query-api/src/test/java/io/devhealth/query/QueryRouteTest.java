package io.devhealth.query;

import io.devhealth.query.http.Permission;
import io.devhealth.query.http.QueryException;
import io.devhealth.query.http.QueryParameters;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.testkit.time.MutableClock;
import java.net.URI;
import org.junit.jupiter.api.Test;

/** Which permission each /v1 endpoint needs: the mapping the SubjectAccessReview is asked about. */
class QueryRouteTest {

    private final MutableClock clock = MutableClock.at("2026-11-29T10:00:00Z");

    private Permission permission(String target) {
        return QueryRoute.of(QueryParameters.parse(URI.create(target), QueryServer.V1), URI.create(target).getRawPath(), clock).permission();
    }

    @Test
    void shouldNeedGetOnThePodInItsNamespaceForAPodQuery() {
        assertThat(permission("/v1/pods/ml/train-0/devices?at=2026-11-29T09:00:00Z"))
                .isEqualTo(new Permission("get", "", "pods", "ml", "train-0"));
    }

    @Test
    void shouldNeedGetOnTheNodeForNodeAndDeviceQueries() {
        Permission node = new Permission("get", "", "nodes", null, "gpu-node-1");

        assertThat(permission("/v1/nodes/gpu-node-1/devices?limit=10")).isEqualTo(node);
        assertThat(permission("/v1/devices/gpu-node-1/gpu.example.com/pool/a/gpu-0/history")).isEqualTo(node);
    }

    @Test
    void shouldNeedGetOnEveryNodeForTheFleetSummary() {
        assertThat(permission("/v1/fleet/summary?window=6h")).isEqualTo(new Permission("get", "", "nodes", null, null));
    }

    @Test
    void shouldRefuseBadNamesAndUnknownEndpointsBeforeAnyReview() {
        assertThatThrownBy(() -> permission("/v1/pods/ML/train-0/devices")).isInstanceOfSatisfying(QueryException.class,
                e -> assertThat(e.status()).isEqualTo(400));
        assertThatThrownBy(() -> permission("/v1/secrets/ml")).isInstanceOfSatisfying(QueryException.class,
                e -> assertThat(e.status()).isEqualTo(404));
    }

    @Test
    void shouldDescribeAPermissionAsTheApiServerWordsIt() {
        assertThat(Permission.pod("ml", "train-0").describe()).isEqualTo("get pods \"train-0\" in namespace \"ml\"");
        assertThat(Permission.allNodes().describe()).isEqualTo("get nodes (cluster scope)");
    }
}
