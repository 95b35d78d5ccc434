package io.devhealth.sink;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class ApiErrorClassTest {

    private static KubernetesClientException http(int code) {
        return new KubernetesClientException("failed", code, new StatusBuilder().withCode(code)
                .withNewDetails().withKind("Pod").withName("train-0").addNewCause().withField("status.podIP").endCause().endDetails()
                .build());
    }

    @Test
    void shouldClassifyHttpAnswers() {
        assertThat(ApiErrorClass.of(http(404))).isEqualTo(ApiErrorClass.NOT_FOUND);
        assertThat(ApiErrorClass.of(http(409))).isEqualTo(ApiErrorClass.CONFLICT);
        assertThat(ApiErrorClass.of(http(422))).isEqualTo(ApiErrorClass.INVALID);
        assertThat(ApiErrorClass.of(http(400))).isEqualTo(ApiErrorClass.INVALID);
        assertThat(ApiErrorClass.of(http(429))).isEqualTo(ApiErrorClass.TRANSIENT);
        assertThat(ApiErrorClass.of(http(500))).isEqualTo(ApiErrorClass.TRANSIENT);
        assertThat(ApiErrorClass.of(http(503))).isEqualTo(ApiErrorClass.TRANSIENT);
        assertThat(ApiErrorClass.of(http(504))).isEqualTo(ApiErrorClass.TRANSIENT);
    }

    @Test
    void shouldTakeAFailedPatchTestForAConflict() {
        // As the real API server answers it: no kind, no name, no causes.
        Status failedTest = new StatusBuilder().withCode(422).withReason("Invalid")
                .withMessage("the server rejected our request due to an error in our request").withNewDetails().endDetails().build();

        assertThat(ApiErrorClass.of(new KubernetesClientException("patch failed", 422, failedTest))).isEqualTo(ApiErrorClass.CONFLICT);
    }

    @Test
    void shouldPauseRatherThanDeadLetterWhenForbidden() {
        assertThat(ApiErrorClass.of(http(403))).isEqualTo(ApiErrorClass.UNREACHABLE);
        assertThat(ApiErrorClass.of(http(401))).isEqualTo(ApiErrorClass.UNREACHABLE);
    }

    @Test
    void shouldClassifyFailuresWithoutAnAnswerByTheirCause() {
        assertThat(ApiErrorClass.of(new KubernetesClientException("get failed",
                new IOException("Connection refused", new ConnectException("Connection refused"))))).isEqualTo(ApiErrorClass.UNREACHABLE);
        assertThat(ApiErrorClass.of(new KubernetesClientException("get failed", new TimeoutException("The timeout period of 1000ms"))))
                .isEqualTo(ApiErrorClass.TRANSIENT);
        assertThat(ApiErrorClass.of(new KubernetesClientException("get failed", new IOException("Connection reset by peer"))))
                .isEqualTo(ApiErrorClass.UNREACHABLE);
    }

    @Test
    void shouldReadRetryAfterFromTheStatusDetails() {
        Status status = new StatusBuilder().withCode(429).withNewDetails().withRetryAfterSeconds(7).endDetails().build();

        assertThat(ApiErrorClass.retryAfter(new KubernetesClientException("slow down", 429, status))).contains(Duration.ofSeconds(7));
        assertThat(ApiErrorClass.retryAfter(http(500))).isEmpty();
    }
}
