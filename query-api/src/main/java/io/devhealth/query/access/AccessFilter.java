package io.devhealth.query.access;

import io.devhealth.query.http.Excerpt;
import io.devhealth.query.http.Exchange;
import io.devhealth.query.http.Permission;
import io.devhealth.query.http.Responses;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import javax.security.auth.x500.X500Principal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lets a request through only when {@link AccessPolicy} allows it: 401 with {@code WWW-Authenticate:
 * Bearer} without valid credentials, 403 for a client certificate that may not query and for a request
 * naming its caller ({@value AccessPolicy#CALLER_SUBJECT_HEADER}) that comes from no peer instance, 400
 * for a caller named by no distinguished name, 503 when the Kubernetes API server cannot be asked.
 * Then, for a caller Kubernetes RBAC decides about, each query is authorized by a
 * {@code SubjectAccessReview} of its {@link Permission}: 403 naming what is missing.
 * Refusals are logged with the remote address and the reason, never with what was presented, and counted
 * in {@code devhealth_query_auth_failures_total{reason}}.
 */
public final class AccessFilter {

    private static final Logger LOGGER = LoggerFactory.getLogger(AccessFilter.class);

    private final AccessPolicy policy;
    private final KubernetesReviews kubernetes;
    private final MeterRegistry meters;

    public AccessFilter(AccessPolicy policy, KubernetesReviews kubernetes, MeterRegistry meters) {
        this.policy = policy;
        this.kubernetes = kubernetes;
        this.meters = meters;
    }

    /** Who the caller is, or null when it may not go on and has been answered. */
    public AccessPolicy.Allowed admits(Exchange exchange) {
        AccessPolicy.Decision decision = policy.check(exchange.header("Authorization"), exchange.verifiedClient(),
                exchange.header(AccessPolicy.CALLER_SUBJECT_HEADER));
        if (decision instanceof AccessPolicy.Denied denied) {
            refuse(exchange, denied.status(), denied.reason(), null);
            if (denied.challenge() != null) {
                exchange.setHeader("WWW-Authenticate", denied.challenge());
            }
            Responses.error(exchange, denied.status(), denied.message());
            return null;
        }
        AccessPolicy.Allowed allowed = (AccessPolicy.Allowed) decision;
        LOGGER.debug("query authenticated principal={} path={}", allowed.principal(), Excerpt.of(exchange.rawPath()));
        return allowed;
    }

    /** Whether {@code caller} holds {@code permission}; if not, it has been answered (403, or 503 without an answer from the API server). */
    public boolean authorizes(Exchange exchange, AccessPolicy.Allowed caller, Permission permission) {
        if (caller.user() == null) {
            return true;
        }
        boolean allowed;
        try {
            allowed = kubernetes.allowed(caller.user(), permission);
        } catch (KubernetesReviews.Unavailable e) {
            refuse(exchange, 503, "unavailable", caller);
            Responses.error(exchange, 503, e.getMessage());
            return false;
        }
        if (!allowed) {
            refuse(exchange, 403, "rbac", caller);
            Responses.forbidden(exchange, "user \"" + caller.user().name() + "\" may not " + permission.describe()
                    + " (Kubernetes RBAC)", permission);
            return false;
        }
        LOGGER.debug("query authorized principal={} permission=\"{}\"", caller.principal(), permission.describe());
        return true;
    }

    private void refuse(Exchange exchange, int status, String reason, AccessPolicy.Allowed caller) {
        X500Principal client = exchange.verifiedClient();
        LOGGER.warn("query refused status={} reason={} principal={} client={} remote={} path={}", status, reason,
                caller == null ? "-" : caller.principal(),
                client == null ? "-" : Excerpt.of(client.getName(X500Principal.RFC2253)),
                exchange.remote(), Excerpt.of(exchange.rawPath()));
        if (meters != null) {
            Counter.builder("devhealth.query.auth.failures").description("Query API requests refused for missing or bad credentials")
                    .tag("reason", reason).register(meters).increment();
        }
    }
}
