package io.devhealth.sink;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every API request of the sink goes through here: a token bucket shared by all requests (reads,
 * patches, events), and for reads and patches a bounded retry on 429, 5xx, timeouts and refused
 * connections, with exponential backoff, ±50% jitter, and the server's Retry-After when it asks for
 * longer. 404, 409 and 422 are never retried here: the writer decides what they mean.
 *
 * <p>The bucket is resilience4j's {@link RateLimiter}: {@code burst} permits per {@code burst/qps}
 * seconds. Over any period the average is at most {@code qps}; at a period boundary up to twice the
 * burst can pass in quick succession (a strict token bucket would allow one burst).
 */
public final class ApiCallPolicy {

    private static final Logger LOGGER = LoggerFactory.getLogger(ApiCallPolicy.class);
    /** Longest Retry-After honoured; a larger value is a misconfigured server, not a plan. */
    private static final Duration MAX_RETRY_AFTER = Duration.ofMinutes(5);

    private final RateLimiter rateLimiter;
    private final Retry retry;
    private final SinkMetrics metrics;

    /**
     * How hard the sink may press the API server and how long it keeps trying.
     *
     * @param qps average requests per second, all kinds together
     * @param burst requests that may pass at once
     * @param maxAttempts attempts of one read or patch (1 = no retry)
     * @param initialInterval the first backoff, doubled per attempt
     * @param maxInterval the longest backoff
     */
    public record Settings(double qps, int burst, int maxAttempts, Duration initialInterval, Duration maxInterval) {

        /** The sink's settings ({@code api.*}, {@code retry.*}). */
        public static Settings of(SinkConfig config) {
            return new Settings(config.apiQps(), config.apiBurst(), config.retryMaxAttempts(), config.retryInitialInterval(),
                    config.retryMaxInterval());
        }

        /** One attempt per request, at most {@code qps} a second in bursts of as many (tests, tools). */
        public static Settings singleAttempt(double qps) {
            return new Settings(qps, (int) qps, 1, Duration.ofMillis(1), Duration.ofMillis(1));
        }
    }

    public ApiCallPolicy(Settings settings, SinkMetrics metrics) {
        this.metrics = metrics;
        double qps = settings.qps();
        int burst = settings.burst();
        int maxAttempts = settings.maxAttempts();
        Duration initialInterval = settings.initialInterval();
        Duration maxInterval = settings.maxInterval();
        long periodNanos = Math.max(1_000_000L, (long) (burst / qps * 1_000_000_000L));
        this.rateLimiter = RateLimiter.of("kubernetes-api", RateLimiterConfig.custom()
                .limitForPeriod(burst)
                .limitRefreshPeriod(Duration.ofNanos(periodNanos))
                // Callers wait for a token rather than fail: the bounded writer pool limits how many wait.
                .timeoutDuration(Duration.ofMinutes(10))
                .build());
        IntervalFunction backoff = IntervalFunction.ofExponentialRandomBackoff(initialInterval, 2.0, 0.5, maxInterval);
        this.retry = Retry.of("kubernetes-api", RetryConfig.custom()
                .maxAttempts(maxAttempts)
                .retryOnException(ApiCallPolicy::isRetryable)
                .intervalBiFunction((attempt, either) -> {
                    long computed = backoff.apply(attempt);
                    if (either.isLeft()) {
                        return ApiErrorClass.retryAfter(either.getLeft())
                                .map(after -> jittered(min(after, MAX_RETRY_AFTER)))
                                .filter(after -> after > computed)
                                .orElse(computed);
                    }
                    return computed;
                })
                .build());
        retry.getEventPublisher().onRetry(event -> {
            ApiErrorClass errorClass = ApiErrorClass.of(event.getLastThrowable());
            metrics.apiRetry(errorClass);
            LOGGER.debug("api request retried attempt={} class={} waitMs={} error=\"{}\"", event.getNumberOfRetryAttempts(),
                    errorClass.tag(), event.getWaitInterval().toMillis(), event.getLastThrowable().getMessage());
        });
    }

    /** A rate-limited request, retried while the failure is transient or the server unreachable. */
    public <T> T call(Supplier<T> request) {
        return retry.executeSupplier(() -> once(request));
    }

    /** A rate-limited request, tried once (best-effort calls such as Events). */
    public <T> T once(Supplier<T> request) {
        RateLimiter.waitForPermission(rateLimiter);
        metrics.apiRequest();
        try {
            return request.get();
        } catch (RuntimeException e) {
            metrics.apiError(ApiErrorClass.of(e));
            throw e;
        }
    }

    /** A failed request that may succeed when repeated: 429, 5xx, timeouts, no connection. */
    static boolean isRetryable(Throwable error) {
        if (!(error instanceof KubernetesClientException)) {
            return false;
        }
        ApiErrorClass errorClass = ApiErrorClass.of(error);
        return errorClass == ApiErrorClass.TRANSIENT || errorClass == ApiErrorClass.UNREACHABLE;
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    /** Retry-After plus up to 20%, so that clients told the same time do not return together. */
    private static long jittered(Duration after) {
        return after.toMillis() + (long) (after.toMillis() * 0.2 * ThreadLocalRandom.current().nextDouble());
    }
}
