package io.devhealth.query.access;

import io.devhealth.query.http.Exchange;
import io.devhealth.query.http.Responses;
import io.devhealth.runtime.security.NodeKeyCredential;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /v1/node-key}: a collector's node signing key, for the collector's own node only.
 *
 * <p>The collector presents the ServiceAccount token the kubelet projected into its pod, for the
 * audience {@link QuerySecurityConfig.NodeKeys#audience()}. A {@code TokenReview} says who holds it and,
 * for a token bound to a pod, which node that pod is bound to: the API server puts the node's name into
 * the token when it issues it for a pod that is scheduled ({@code authentication.kubernetes.io/node-name},
 * KEP-4193; the kubelet can only request tokens for pods on its own node, NodeRestriction). So a
 * collector, or anyone who took its token, gets the key of the node the token came from and no other:
 * the same guarantee the keys give the records. The cluster secret they are derived from stays in the
 * processor.
 *
 * <p>Answers 401 for a missing, invalid or other-audience token, 403 for another ServiceAccount or a
 * token bound to no node (one from {@code kubectl create token}), 503 when the API server does not
 * answer. The key is sent only over TLS (the query API's, required with this endpoint) and with
 * {@code Cache-Control: no-store}; it is never logged. Counted in
 * {@code devhealth_query_node_keys_total{outcome}}.
 */
public final class NodeKeyIssuer {

    private static final Logger LOGGER = LoggerFactory.getLogger(NodeKeyIssuer.class);
    /** Where a TokenReview names the node of a pod-bound token's pod. */
    static final String NODE_NAME_EXTRA = "authentication.kubernetes.io/node-name";
    static final String POD_NAME_EXTRA = "authentication.kubernetes.io/pod-name";
    public static final String PATH = "/v1/node-key";

    /** The answer: the one-line credential a collector reads with {@code node.key.file}. */
    record Issued(String node, String keyId, String credential) {}

    private final KubernetesReviews reviews;
    private final QuerySecurityConfig.NodeKeys settings;
    private final byte[] master;
    private final MeterRegistry meters;

    public NodeKeyIssuer(KubernetesReviews reviews, QuerySecurityConfig.NodeKeys settings, byte[] master, MeterRegistry meters) {
        this.reviews = reviews;
        this.settings = settings;
        this.master = master.clone();
        this.meters = meters;
    }

    public void handle(Exchange exchange) throws IOException {
        AuthorizationHeader presented = AuthorizationHeader.parse(exchange.header("Authorization"));
        if (presented.presented() == AuthorizationHeader.Presented.NONE
                || presented.presented() == AuthorizationHeader.Presented.OTHER_SCHEME) {
            refuse(exchange, 401, "missing", "send the collector's ServiceAccount token: Authorization: Bearer <token>");
            return;
        }
        Optional<KubernetesUser> user = Optional.empty();
        if (presented.token() != null) {
            try {
                user = reviews.authenticate(presented.token(), List.of(settings.audience()));
            } catch (KubernetesReviews.Unavailable e) {
                refuse(exchange, 503, "unavailable", e.getMessage());
                return;
            }
        }
        if (user.isEmpty()) {
            refuse(exchange, 401, "invalid", "the token is not valid for audience " + settings.audience());
            return;
        }
        KubernetesUser caller = user.get();
        if (!settings.serviceAccounts().contains(caller.name())) {
            refuse(exchange, 403, "service_account", "user \"" + caller.name() + "\" may not fetch node keys");
            return;
        }
        List<String> nodes = caller.extra().getOrDefault(NODE_NAME_EXTRA, List.of());
        if (nodes.size() != 1 || nodes.get(0).isBlank()) {
            refuse(exchange, 403, "unbound", "the token is bound to no pod on a node: use the ServiceAccount token projected "
                    + "into the collector's pod (audience " + settings.audience() + ")");
            return;
        }
        String node = nodes.get(0);
        NodeKeyCredential credential = NodeKeyCredential.issue(master, node);
        count("issued");
        LOGGER.info("node key issued node={} keyId={} principal={} pod={}", node, credential.keyId(), caller.name(),
                caller.extra().getOrDefault(POD_NAME_EXTRA, List.of()));
        exchange.setHeader("Cache-Control", "no-store");
        Responses.json(exchange, 200, new Issued(node, credential.keyId(), credential.format()));
    }

    private void refuse(Exchange exchange, int status, String reason, String message) {
        count(reason);
        LOGGER.warn("node key refused status={} reason={} remote={}", status, reason, exchange.remote());
        if (status == 401) {
            exchange.setHeader("WWW-Authenticate", AccessPolicy.CHALLENGE);
        }
        Responses.error(exchange, status, message);
    }

    private void count(String outcome) {
        if (meters != null) {
            Counter.builder("devhealth.query.node.keys").description("Node keys issued to collectors, and refusals by reason")
                    .tag("outcome", outcome).register(meters).increment();
        }
    }
}
