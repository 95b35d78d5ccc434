package io.devhealth.processor.query;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lets a request through only when {@link AccessPolicy} allows it: 401 with {@code WWW-Authenticate:
 * Bearer} without valid credentials, 403 for a client certificate that may not query. Refusals are
 * logged with the remote address and the reason, never with what was presented, and counted in
 * {@code devhealth_query_auth_failures_total{reason}}.
 */
final class AccessFilter {

    private static final Logger LOGGER = LoggerFactory.getLogger(AccessFilter.class);

    private final AccessPolicy policy;
    private final MeterRegistry meters;

    AccessFilter(AccessPolicy policy, MeterRegistry meters) {
        this.policy = policy;
        this.meters = meters;
    }

    /** Whether the caller may go on; if not, it has been answered. */
    boolean admits(Exchange exchange) {
        AccessPolicy.Decision decision = policy.check(exchange.header("Authorization"), exchange.verifiedClient());
        if (decision instanceof AccessPolicy.Denied denied) {
            LOGGER.warn("query refused status={} reason={} remote={} path={}", denied.status(), denied.reason(),
                    exchange.remote(), Excerpt.of(exchange.rawPath()));
            if (meters != null) {
                Counter.builder("devhealth.query.auth.failures").description("Query API requests refused for missing or bad credentials")
                        .tag("reason", denied.reason()).register(meters).increment();
            }
            if (denied.challenge() != null) {
                exchange.setHeader("WWW-Authenticate", denied.challenge());
            }
            Responses.error(exchange, denied.status(), denied.message());
            return false;
        }
        LOGGER.debug("query allowed principal={} path={}", ((AccessPolicy.Allowed) decision).principal(), Excerpt.of(exchange.rawPath()));
        return true;
    }
}
