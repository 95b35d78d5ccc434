package io.devhealth.sink;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeoutException;

/** How the sink treats a failed API request; one class per distinct reaction. */
public enum ApiErrorClass {
    /** 404: the pod is gone; drop the status (its history stays in Kafka and the query API). */
    NOT_FOUND,
    /** 409, or a failed {@code test} of our JSON Patch: re-read the pod and recompute. */
    CONFLICT,
    /** 422 (and other 4xx we cannot fix by retrying): dead-letter, never retry. */
    INVALID,
    /** 429, 5xx and timeouts: back off with jitter, honouring Retry-After. */
    TRANSIENT,
    /** No connection at all: pause consumption until the API server answers again. */
    UNREACHABLE;

    /** Classifies a failure of a fabric8 call; anything that is not an HTTP answer counts by its cause. */
    public static ApiErrorClass of(Throwable error) {
        if (error instanceof KubernetesClientException e && e.getCode() > 0) {
            int code = e.getCode();
            if (code == 404 || code == 410) {
                return NOT_FOUND;
            }
            if (code == 409 || (code == 422 && isFailedPatchTest(e))) {
                return CONFLICT;
            }
            if (code == 429 || code >= 500 || code == 408) {
                return TRANSIENT;
            }
            if (code == 401 || code == 403) {
                // Our credentials or RBAC are wrong: every write would fail alike. Wait for an operator
                // (pausing like an outage) rather than dead-letter valid statuses.
                return UNREACHABLE;
            }
            return INVALID;
        }
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof TimeoutException || cause instanceof InterruptedIOException) {
                return TRANSIENT;
            }
            if (cause instanceof ConnectException || cause instanceof NoRouteToHostException || cause instanceof UnknownHostException) {
                return UNREACHABLE;
            }
            String message = String.valueOf(cause.getMessage()).toLowerCase(Locale.ROOT);
            if (message.contains("timeout") || message.contains("timed out")) {
                return TRANSIENT;
            }
            if (message.contains("connection refused")) {
                return UNREACHABLE;
            }
        }
        // A broken connection (reset, closed mid-answer) without an HTTP status: treat as unreachable;
        // the write is repeated once the server answers, which is safe because writes are idempotent.
        if (hasCause(error, IOException.class)) {
            return UNREACHABLE;
        }
        return TRANSIENT;
    }

    /**
     * A JSON Patch the server could not apply. The API server answers a failed {@code test} op with a
     * bare 422 ({@code jsonPatcher.applyJSPatch}, apiserver {@code pkg/endpoints/handlers/patch.go}:
     * {@code NewGenericServerResponse(422, ...)}: no kind, no name, no field causes; seen on 1.36 in
     * {@code SinkOnRealKubeletIT}), while content it refuses fails validation with the object's kind,
     * name and the fields at fault. The sink writes only patches it generated, so one that does not
     * apply failed its {@code test}: the object moved since it was read. That is a conflict.
     */
    private static boolean isFailedPatchTest(KubernetesClientException e) {
        if (e.getStatus() == null) {
            return false;
        }
        var details = e.getStatus().getDetails();
        return details == null || (details.getKind() == null && details.getName() == null
                && (details.getCauses() == null || details.getCauses().isEmpty()));
    }

    /** The server's Retry-After ({@code details.retryAfterSeconds} of the Status, as for 429 and some 5xx). */
    public static Optional<Duration> retryAfter(Throwable error) {
        if (error instanceof KubernetesClientException e && e.getStatus() != null && e.getStatus().getDetails() != null) {
            Integer seconds = e.getStatus().getDetails().getRetryAfterSeconds();
            if (seconds != null && seconds > 0) {
                return Optional.of(Duration.ofSeconds(seconds));
            }
        }
        return Optional.empty();
    }

    /** A short, metric-friendly name. */
    public String tag() {
        return name().toLowerCase(Locale.ROOT);
    }

    private static boolean hasCause(Throwable error, Class<? extends Throwable> type) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (type.isInstance(cause)) {
                return true;
            }
        }
        return false;
    }
}
