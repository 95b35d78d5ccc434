package io.devhealth.processor.query;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsExchange;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import javax.security.auth.x500.X500Principal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lets a request through only when {@link AccessPolicy} allows it: 401 with {@code WWW-Authenticate:
 * Bearer} without valid credentials, 403 for a client certificate that may not query. Refusals are
 * logged with the remote address and the reason, never with what was presented, and counted in
 * {@code devhealth_query_auth_failures_total{reason}}.
 */
final class AccessFilter extends Filter {

    private static final Logger LOGGER = LoggerFactory.getLogger(AccessFilter.class);

    private final AccessPolicy policy;
    private final MeterRegistry meters;

    AccessFilter(AccessPolicy policy, MeterRegistry meters) {
        this.policy = policy;
        this.meters = meters;
    }

    @Override
    public void doFilter(HttpExchange exchange, Chain chain) throws IOException {
        AccessPolicy.Decision decision = policy.check(exchange.getRequestHeaders().getFirst("Authorization"), verifiedClient(exchange));
        if (decision instanceof AccessPolicy.Denied denied) {
            LOGGER.warn("query refused status={} reason={} remote={} path={}", denied.status(), denied.reason(),
                    exchange.getRemoteAddress(), Excerpt.of(exchange.getRequestURI().getRawPath()));
            if (meters != null) {
                Counter.builder("devhealth.query.auth.failures").description("Query API requests refused for missing or bad credentials")
                        .tag("reason", denied.reason()).register(meters).increment();
            }
            if (denied.challenge() != null) {
                exchange.getResponseHeaders().set("WWW-Authenticate", denied.challenge());
            }
            Responses.error(exchange, denied.status(), denied.message());
            return;
        }
        LOGGER.debug("query allowed principal={} path={}", ((AccessPolicy.Allowed) decision).principal(),
                Excerpt.of(exchange.getRequestURI().getRawPath()));
        chain.doFilter(exchange);
    }

    /** The client certificate's subject, if the TLS layer asked for one and verified it against the truststore. */
    private static X500Principal verifiedClient(HttpExchange exchange) {
        if (!(exchange instanceof HttpsExchange https)) {
            return null;
        }
        SSLSession session = https.getSSLSession();
        if (session == null) {
            return null;
        }
        try {
            Certificate[] chain = session.getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof X509Certificate leaf ? leaf.getSubjectX500Principal() : null;
        } catch (SSLPeerUnverifiedException e) {
            return null;
        }
    }

    @Override
    public String description() {
        return "bearer token or client certificate authentication";
    }
}
