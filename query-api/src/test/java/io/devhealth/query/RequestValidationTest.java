package io.devhealth.query;

import io.devhealth.query.http.Excerpt;
import io.devhealth.query.http.KubernetesNames;
import io.devhealth.query.http.PageTokens;
import io.devhealth.query.http.QueryException;
import io.devhealth.query.http.QueryParameters;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** {@link KubernetesNames}, {@link QueryParameters} and {@link Excerpt}: bad input is a 400 that shows little of it. */
class RequestValidationTest {

    private static QueryParameters parse(String uri) {
        return QueryParameters.parse(URI.create(uri), "/v1/");
    }

    private static void assertBadRequest(Runnable check, String messagePart) {
        assertThatThrownBy(check::run).isInstanceOfSatisfying(QueryException.class, e -> {
            assertThat(e.status()).isEqualTo(400);
            assertThat(e.getMessage()).contains(messagePart);
        });
    }

    @Test
    void shouldAcceptKubernetesNames() {
        assertThat(KubernetesNames.namespace("ml-team")).isEqualTo("ml-team");
        assertThat(KubernetesNames.podName("train-0.shard-1")).isEqualTo("train-0.shard-1");
        assertThat(KubernetesNames.nodeName("ip-10-0-0-1.ec2.internal")).isEqualTo("ip-10-0-0-1.ec2.internal");
        assertThat(KubernetesNames.driver("gpu.nvidia.com")).isEqualTo("gpu.nvidia.com");
        assertThat(KubernetesNames.pool("node-1/rack.a")).isEqualTo("node-1/rack.a");
        assertThat(KubernetesNames.device("gpu-0")).isEqualTo("gpu-0");
    }

    @Test
    void shouldRejectNamesOutsideTheKubernetesRules() {
        assertBadRequest(() -> KubernetesNames.namespace("ML"), "namespace must be a DNS-1123 label");
        assertBadRequest(() -> KubernetesNames.namespace("a.b"), "namespace");
        assertBadRequest(() -> KubernetesNames.namespace("x".repeat(64)), "at most 63");
        assertBadRequest(() -> KubernetesNames.podName("-train"), "pod name must be a DNS-1123 subdomain");
        assertBadRequest(() -> KubernetesNames.podName("a..b"), "pod name");
        assertBadRequest(() -> KubernetesNames.nodeName("node_1"), "node name");
        assertBadRequest(() -> KubernetesNames.nodeName("a".repeat(64) + ".b"), "labels have at most 63");
        assertBadRequest(() -> KubernetesNames.driver("d".repeat(64)), "driver");
        assertBadRequest(() -> KubernetesNames.pool("node-1//x"), "pool");
        assertBadRequest(() -> KubernetesNames.pool("p".repeat(254)), "pool");
        assertBadRequest(() -> KubernetesNames.device("gpu/0"), "device");
        assertBadRequest(() -> KubernetesNames.device("../etc"), "device");
    }

    @Test
    void shouldShowOnlyAShortPrintableExcerptOfTheInput() {
        String hostile = "\u001b[31mred\u001b[0m" + "x".repeat(200);

        assertThatThrownBy(() -> KubernetesNames.namespace(hostile)).satisfies(e -> {
            assertThat(e.getMessage()).doesNotContain("\u001b").doesNotContain("x".repeat(100)).contains("(212 chars)");
        });
        assertThat(Excerpt.of("a'b\\c\nd")).isEqualTo("'a?b?c?d'");
    }

    @Test
    void shouldDecodePathSegmentsAndRejectEmptyOnes() {
        assertThat(parse("/v1/pods/ml/train%2D0/devices").segments()).containsExactly("pods", "ml", "train-0", "devices");
        assertThat(parse("/v1/pods/ml/a+b/devices").segments().get(2)).isEqualTo("a+b");
        assertBadRequest(() -> parse("/v1/pods//x/devices"), "empty path segment");
    }

    @Test
    void shouldRejectUnknownAndRepeatedParameters() {
        assertBadRequest(() -> parse("/v1/nodes/n/devices?limt=5").allowOnly("limit", "continue"), "unknown parameter 'limt'");
        assertBadRequest(() -> parse("/v1/nodes/n/devices?limit=5&limit=6"), "given more than once");
    }

    @Test
    void shouldAcceptOnlyRfc3339Times() {
        assertThat(parse("/v1/x?at=2026-11-29T10:00:01%2B01:00").instant("at")).contains(Instant.parse("2026-11-29T09:00:01Z"));
        assertThat(parse("/v1/x?at=2026-11-29t10:00:01.5z").instant("at")).contains(Instant.parse("2026-11-29T10:00:01.500Z"));
        assertThat(parse("/v1/x").instant("at")).isEmpty();
        assertBadRequest(() -> parse("/v1/x?at=yesterday").instant("at"), "RFC 3339");
        assertBadRequest(() -> parse("/v1/x?at=2026-11-29T10:00Z").instant("at"), "RFC 3339");
        assertBadRequest(() -> parse("/v1/x?at=2026-11-29").instant("at"), "RFC 3339");
        assertBadRequest(() -> parse("/v1/x?at=2026-13-40T10:00:00Z").instant("at"), "RFC 3339");
    }

    @Test
    void shouldBoundTheLimit() {
        assertThat(parse("/v1/x").limit()).isEqualTo(QueryParameters.DEFAULT_LIMIT);
        assertThat(parse("/v1/x?limit=1000").limit()).isEqualTo(1000);
        assertBadRequest(() -> parse("/v1/x?limit=0").limit(), "limit must be an integer from 1 to 1000");
        assertBadRequest(() -> parse("/v1/x?limit=1001").limit(), "limit");
        assertBadRequest(() -> parse("/v1/x?limit=-1").limit(), "limit");
        assertBadRequest(() -> parse("/v1/x?limit=99999999999999999999").limit(), "limit");
    }

    @Test
    void shouldRejectAnOverlongContinueToken() {
        assertBadRequest(() -> parse("/v1/x?continue=" + "a".repeat(PageTokens.MAX_LENGTH + 1)).continueToken(), "continue token");
    }
}
