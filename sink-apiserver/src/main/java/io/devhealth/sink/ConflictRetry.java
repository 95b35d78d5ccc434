package io.devhealth.sink;

import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import java.util.function.IntFunction;

/**
 * How every writer of the sink repeats a write that met a conflict: the object changed since it was read
 * (409, or a failed resourceVersion {@code test}, {@link ApiErrorClass#CONFLICT}), or it went away between
 * two requests that had to find it alike. An attempt reads again what it needs and throws {@link #conflict()}
 * to be made once more, from what it read; when {@code maxAttempts} are spent, the caller's exception says
 * so. The attempts follow each other without a pause: the read in between is what a conflict waits for.
 *
 * <p>resilience4j's {@link Retry} counts the attempts, as it does for {@link ApiCallPolicy}'s backoff. A
 * thread interrupted between two attempts makes no further one (the caller's exception follows at once):
 * its write has been abandoned.
 */
public final class ConflictRetry {

    private final Retry retry;

    /** @param name names the retry in resilience4j's events */
    public ConflictRetry(String name, int maxAttempts) {
        this.retry = Retry.of(name, RetryConfig.custom()
                .maxAttempts(maxAttempts)
                .intervalFunction(attempt -> 0L)
                .retryOnException(Conflict.class::isInstance)
                .build());
    }

    /**
     * Makes {@code attempt} (given its number, from 1) until it returns; again after each {@link #conflict()} it throws.
     *
     * @throws WriteConflictsExhaustedException when every attempt met a conflict: the write is repeated
     *     later, like one that met a transient failure
     */
    public <T> T call(String key, IntFunction<T> attempt) {
        return call(attempt, attempts -> new WriteConflictsExhaustedException(key, attempts));
    }

    /** As {@link #call(String, IntFunction)}, with the caller's own exception (given the attempts made) when they are spent. */
    public <T> T call(IntFunction<T> attempt, IntFunction<? extends RuntimeException> exhausted) {
        int[] attempts = {0};
        try {
            return retry.executeSupplier(() -> attempt.apply(++attempts[0]));
        } catch (Conflict e) {
            throw exhausted.apply(attempts[0]);
        }
    }

    /** What an attempt throws, once it has read again what the next one needs. */
    public static RuntimeException conflict() {
        return new Conflict();
    }

    /** Never leaves {@link #call}: no message, no stack trace. */
    private static final class Conflict extends RuntimeException {
        private Conflict() {
            super(null, null, false, false);
        }
    }
}
