package io.devhealth.query.access;

import io.devhealth.query.http.Excerpt;
import io.devhealth.query.http.Permission;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewStatus;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link KubernetesReviews} asked of the API server through fabric8, as the processor's own
 * ServiceAccount (which needs {@code create} on {@code tokenreviews} and {@code subjectaccessreviews}).
 * Every call is counted in {@code devhealth_query_kubernetes_reviews_total{review,outcome}}, so that what
 * the cache in front ({@link CachedReviews}) saves can be seen.
 *
 * <p>A token is sent only in the review's body, over the client's TLS connection; it is never logged.
 */
public final class ApiServerReviews implements KubernetesReviews, AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(ApiServerReviews.class);
    public static final String COUNTER = "devhealth.query.kubernetes.reviews";

    private final KubernetesClient client;
    private volatile MeterRegistry meters;

    ApiServerReviews(KubernetesClient client) {
        this.client = client;
    }

    /**
     * A client for {@code settings}: from its kubeconfig, else fabric8's automatic configuration (the pod's
     * ServiceAccount in a cluster). It does not retry: a query holds one of few slots while it waits, and
     * the caller, told 503, retries.
     */
    public static ApiServerReviews connect(QuerySecurityConfig.Kubernetes settings) {
        Path kubeconfig = settings.kubeconfig();
        Config base = kubeconfig == null ? Config.autoConfigure(null) : Config.fromKubeconfig(kubeconfig.toFile());
        int timeout = Math.toIntExact(settings.timeout().toMillis());
        Config config = new ConfigBuilder(base).withRequestTimeout(timeout).withConnectionTimeout(timeout)
                .withRequestRetryBackoffLimit(0).build();
        LOGGER.info("query authorization by the Kubernetes API server master={} audiences={}", config.getMasterUrl(),
                settings.audiences());
        return new ApiServerReviews(new KubernetesClientBuilder().withConfig(config).build());
    }

    /** Where the calls are counted; until set, they are not. */
    public void countIn(MeterRegistry registry) {
        this.meters = registry;
    }

    @Override
    public Optional<KubernetesUser> authenticate(String token, List<String> audiences) {
        TokenReview review = new TokenReviewBuilder().withNewSpec().withToken(token).withAudiences(audiences).endSpec().build();
        TokenReviewStatus status;
        try {
            status = client.authentication().v1().tokenReviews().create(review).getStatus();
        } catch (KubernetesClientException e) {
            throw unavailable("tokenreview", "tokenreviews", e);
        }
        // As the API server's own webhook authenticator does (k8s.io/apiserver
        // plugin/pkg/authenticator/token/webhook/webhook.go, AuthenticateToken): the token counts only for
        // an audience asked for, which the API server echoes in status.audiences.
        boolean authenticated = status != null && Boolean.TRUE.equals(status.getAuthenticated()) && status.getUser() != null
                && status.getAudiences() != null && status.getAudiences().stream().anyMatch(audiences::contains);
        count("tokenreview", authenticated ? "authenticated" : "unauthenticated");
        if (!authenticated) {
            return Optional.empty();
        }
        UserInfo user = status.getUser();
        return Optional.of(new KubernetesUser(user.getUsername(), user.getUid(), user.getGroups(), user.getExtra()));
    }

    @Override
    public boolean allowed(KubernetesUser user, Permission permission) {
        SubjectAccessReview review = new SubjectAccessReviewBuilder().withNewSpec()
                .withUser(user.name()).withUid(user.uid().isEmpty() ? null : user.uid()).withGroups(user.groups())
                .withExtra(user.extra())
                .withNewResourceAttributes().withVerb(permission.verb()).withGroup(permission.group())
                        .withResource(permission.resource()).withNamespace(permission.namespace()).withName(permission.name())
                .endResourceAttributes()
                .endSpec().build();
        SubjectAccessReview answer;
        try {
            answer = client.authorization().v1().subjectAccessReview().create(review);
        } catch (KubernetesClientException e) {
            throw unavailable("subjectaccessreview", "subjectaccessreviews", e);
        }
        boolean allowed = answer.getStatus() != null && Boolean.TRUE.equals(answer.getStatus().getAllowed());
        count("subjectaccessreview", allowed ? "allowed" : "denied");
        if (!allowed && answer.getStatus() != null && answer.getStatus().getEvaluationError() != null) {
            LOGGER.warn("subject access review had an evaluation error user={} permission=\"{}\" error={}", user.name(),
                    permission.describe(), Excerpt.of(answer.getStatus().getEvaluationError()));
        }
        return allowed;
    }

    private Unavailable unavailable(String review, String resource, KubernetesClientException e) {
        count(review, "error");
        if (e.getCode() == 401 || e.getCode() == 403) {
            LOGGER.error("the Kubernetes API server refused the processor's {} status={}: grant its ServiceAccount create on "
                    + "{} (system:auth-delegator)", review, e.getCode(), resource);
        } else {
            LOGGER.warn("no answer from the Kubernetes API server review={} status={} error={}", review, e.getCode(),
                    Excerpt.of(String.valueOf(e.getCause() == null ? e.getMessage() : e.getCause().toString())));
        }
        return new Unavailable("cannot check the credentials with the Kubernetes API server (" + review + " failed), retry shortly", e);
    }

    private void count(String review, String outcome) {
        MeterRegistry registry = meters;
        if (registry != null) {
            Counter.builder(COUNTER).description("TokenReviews and SubjectAccessReviews the query API asked of the Kubernetes API server")
                    .tag("review", review).tag("outcome", outcome).register(registry).increment();
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
