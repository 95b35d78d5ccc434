package io.devhealth.query.access;

import io.devhealth.query.http.Permission;
import java.util.List;
import java.util.Optional;

/**
 * The two questions the query API asks the Kubernetes API server: who holds this token, and may this
 * user do that. Both throw {@link Unavailable} when there is no answer (the API server unreachable, slow
 * or refusing the processor), which the caller turns into a 503: never into access.
 */
public interface KubernetesReviews {

    /** The user {@code token} authenticates for one of {@code audiences}; empty when it does not. */
    Optional<KubernetesUser> authenticate(String token, List<String> audiences);

    /** Whether {@code user} holds {@code permission}. */
    boolean allowed(KubernetesUser user, Permission permission);

    /** No answer from the API server; the message is safe to show (it holds no credential). */
    final class Unavailable extends RuntimeException {
        Unavailable(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
