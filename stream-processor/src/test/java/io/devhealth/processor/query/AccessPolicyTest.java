package io.devhealth.processor.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.testkit.time.MutableClock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.security.auth.x500.X500Principal;
import org.junit.jupiter.api.Test;

class AccessPolicyTest {

    private static final X500Principal OPERATOR = new X500Principal("CN=devhealth-client, O=sre");
    private static final X500Principal COLLECTOR = new X500Principal("CN=collector-node-1, O=fleet");

    private final BearerTokens tokens = new BearerTokens(null, "s3cret-token", Duration.ofSeconds(10),
            MutableClock.at("2026-11-29T10:00:00Z"));

    @Test
    void shouldLetEveryoneInWhenNothingIsConfigured() {
        assertThat(AccessPolicy.open().check(null, null)).isEqualTo(new AccessPolicy.Allowed("anonymous"));
    }

    @Test
    void shouldChallengeARequestWithoutCredentials() {
        AccessPolicy.Decision decision = new AccessPolicy(true, tokens, List.of()).check(null, null);

        assertThat(decision).isInstanceOfSatisfying(AccessPolicy.Denied.class, denied -> {
            assertThat(denied.status()).isEqualTo(401);
            assertThat(denied.challenge()).isEqualTo("Bearer realm=\"devhealth\"");
            assertThat(denied.reason()).isEqualTo("missing");
        });
    }

    @Test
    void shouldRejectOtherSchemesAndWrongTokensWithoutEchoingThem() {
        AccessPolicy policy = new AccessPolicy(true, tokens, List.of());

        AccessPolicy.Denied basic = (AccessPolicy.Denied) policy.check("Basic czNjcmV0LXRva2Vu", null);
        AccessPolicy.Denied wrong = (AccessPolicy.Denied) policy.check("Bearer s3cret-tokeN", null);

        assertThat(basic.status()).isEqualTo(401);
        assertThat(basic.challenge()).contains("invalid_request");
        assertThat(wrong.status()).isEqualTo(401);
        assertThat(wrong.challenge()).contains("error=\"invalid_token\"");
        assertThat(wrong.message()).doesNotContain("s3cret");
    }

    @Test
    void shouldAcceptTheBearerTokenWhateverTheSchemesCase() {
        AccessPolicy policy = new AccessPolicy(true, tokens, List.of());

        assertThat(policy.check("Bearer s3cret-token", null)).isEqualTo(new AccessPolicy.Allowed("token"));
        assertThat(policy.check("bearer  s3cret-token ", null)).isEqualTo(new AccessPolicy.Allowed("token"));
    }

    @Test
    void shouldAcceptAVerifiedClientCertificate() {
        assertThat(new AccessPolicy(true, null, List.of()).check(null, OPERATOR))
                .isEqualTo(new AccessPolicy.Allowed("cert:devhealth-client"));
    }

    @Test
    void shouldForbidACertificateOutsideTheAllowedPrincipalsUnlessATokenVouches() {
        AccessPolicy policy = new AccessPolicy(true, tokens, List.of("CN=devhealth-client,O=sre", "CN=processor,O=fleet"));

        assertThat(policy.check(null, OPERATOR)).isInstanceOf(AccessPolicy.Allowed.class);
        assertThat(policy.check(null, new X500Principal("CN=processor,  O=fleet")))
                .as("a full DN matches whatever its spacing").isInstanceOf(AccessPolicy.Allowed.class);
        assertThat(policy.check(null, COLLECTOR)).isInstanceOfSatisfying(AccessPolicy.Denied.class,
                denied -> assertThat(denied.status()).isEqualTo(403));
        assertThat(policy.check("Bearer nope", COLLECTOR)).isInstanceOfSatisfying(AccessPolicy.Denied.class,
                denied -> assertThat(denied.status()).isEqualTo(403));
        assertThat(policy.check("Bearer s3cret-token", COLLECTOR)).isEqualTo(new AccessPolicy.Allowed("token"));
    }

    @Test
    void shouldMatchTheWholeSubjectNotItsCommonName() {
        AccessPolicy policy = new AccessPolicy(true, null, List.of("cn=devhealth-client,o=SRE"));

        assertThat(policy.check(null, OPERATOR)).as("attribute types in any case").isInstanceOf(AccessPolicy.Allowed.class);
        assertThat(policy.check(null, new X500Principal("CN=devhealth-client, O=elsewhere")))
                .as("the same CN under another organization").isInstanceOfSatisfying(AccessPolicy.Denied.class,
                        denied -> assertThat(denied.status()).isEqualTo(403));
        assertThat(policy.check(null, new X500Principal("CN=devhealth-client")))
                .as("the CN alone").isInstanceOf(AccessPolicy.Denied.class);
    }

    @Test
    void shouldRefuseABareCommonNameAsAnAllowedPrincipal() {
        assertThatThrownBy(() -> new AccessPolicy(true, null, List.of("devhealth-client")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("distinguished name");
    }

    @Test
    void shouldRefuseTokensWhenOnlyCertificatesAreConfigured() {
        assertThat(new AccessPolicy(true, null, List.of()).check("Bearer s3cret-token", null))
                .isInstanceOfSatisfying(AccessPolicy.Denied.class, denied -> assertThat(denied.status()).isEqualTo(401));
    }

    /** Knows one token; any call after {@code down} fails as an unreachable API server does. */
    private static final class FakeReviews implements KubernetesReviews {
        static final KubernetesUser TRAINER = new KubernetesUser("system:serviceaccount:ml:trainer", "u-1",
                List.of("system:serviceaccounts"), Map.of());
        boolean down;
        int calls;

        @Override
        public Optional<KubernetesUser> authenticate(String token, List<String> audiences) {
            calls++;
            if (down) {
                throw new Unavailable("cannot check the credentials with the Kubernetes API server", null);
            }
            return token.equals("sa-token") && audiences.contains("devhealth-query") ? Optional.of(TRAINER) : Optional.empty();
        }

        @Override
        public boolean allowed(KubernetesUser user, Permission permission) {
            return false;
        }
    }

    @Test
    void shouldAuthenticateATokenByTheApiServerAndKeepStaticTokensUnrestricted() {
        FakeReviews reviews = new FakeReviews();
        AccessPolicy policy = new AccessPolicy(true, tokens, List.of(), reviews, List.of("devhealth-query"));

        assertThat(policy.check("Bearer sa-token", null)).isEqualTo(new AccessPolicy.Allowed("user:" + FakeReviews.TRAINER.name(),
                FakeReviews.TRAINER));
        assertThat(policy.check("Bearer s3cret-token", null)).as("a static token is not sent to the API server")
                .isEqualTo(new AccessPolicy.Allowed("token"));
        assertThat(reviews.calls).isEqualTo(1);
        assertThat(policy.check("Bearer unknown", null)).isInstanceOfSatisfying(AccessPolicy.Denied.class,
                denied -> assertThat(denied.status()).isEqualTo(401));
    }

    @Test
    void shouldAnswer503NotAccessWhenTheApiServerCannotBeAsked() {
        FakeReviews reviews = new FakeReviews();
        reviews.down = true;

        assertThat(new AccessPolicy(true, null, List.of(), reviews, List.of("devhealth-query")).check("Bearer sa-token", OPERATOR))
                .isInstanceOfSatisfying(AccessPolicy.Denied.class, denied -> {
                    assertThat(denied.status()).isEqualTo(503);
                    assertThat(denied.reason()).isEqualTo("unavailable");
                });
    }

    @Test
    void shouldLetASentTokenDecideOverTheForwardingInstancesCertificate() {
        AccessPolicy policy = new AccessPolicy(true, null, List.of(), new FakeReviews(), List.of("devhealth-query"));

        assertThat(policy.check("Bearer sa-token", OPERATOR)).isEqualTo(new AccessPolicy.Allowed("user:" + FakeReviews.TRAINER.name(),
                FakeReviews.TRAINER));
        assertThat(policy.check("Bearer forged", OPERATOR)).isInstanceOfSatisfying(AccessPolicy.Denied.class,
                denied -> assertThat(denied.status()).isEqualTo(401));
    }

    @Test
    void shouldMapACertificateAsTheApiServerDoesWhenKubernetesDecides() {
        AccessPolicy policy = new AccessPolicy(true, null, List.of(), new FakeReviews(), List.of("devhealth-query"));

        assertThat(policy.check(null, new X500Principal("CN=jane, O=sre, O=oncall"))).isEqualTo(new AccessPolicy.Allowed("cert:jane",
                new KubernetesUser("jane", "", List.of("sre", "oncall"), Map.of())));
        assertThat(new AccessPolicy(true, null, List.of()).check(null, OPERATOR)).as("without Kubernetes: every query")
                .isEqualTo(new AccessPolicy.Allowed("cert:devhealth-client"));
    }
}
