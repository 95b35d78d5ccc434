package io.devhealth.query.access;

import io.devhealth.query.http.Permission;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * {@link KubernetesReviews} in front of the API server's: answers, positive and negative, are reused for a
 * short time, so that a burst of queries is not a burst of reviews. Tokens are keyed by their SHA-256
 * digest, never kept themselves; decisions by the user and the permission. Failures are not kept.
 */
public final class CachedReviews implements KubernetesReviews {

    private record TokenKey(String digest, List<String> audiences) {}

    private record DecisionKey(KubernetesUser user, Permission permission) {}

    private final KubernetesReviews delegate;
    private final ExpiringCache<TokenKey, Optional<KubernetesUser>> tokens;
    private final ExpiringCache<DecisionKey, Boolean> decisions;

    public CachedReviews(KubernetesReviews delegate, int maxEntries, Duration ttl, Clock clock) {
        this.delegate = delegate;
        this.tokens = new ExpiringCache<>(maxEntries, ttl, clock);
        this.decisions = new ExpiringCache<>(maxEntries, ttl, clock);
    }

    @Override
    public Optional<KubernetesUser> authenticate(String token, List<String> audiences) {
        return tokens.get(new TokenKey(digest(token), List.copyOf(audiences)), key -> delegate.authenticate(token, audiences));
    }

    @Override
    public boolean allowed(KubernetesUser user, Permission permission) {
        return decisions.get(new DecisionKey(user, permission), key -> delegate.allowed(user, permission));
    }

    private static String digest(String token) {
        return HexFormat.of().formatHex(BearerTokens.sha256(token));
    }
}
