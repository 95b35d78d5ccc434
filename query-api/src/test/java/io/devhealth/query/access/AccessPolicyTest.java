package io.devhealth.query.access;

import io.devhealth.query.http.Permission;
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
                .isEqualTo(new AccessPolicy.Allowed("cert:devhealth-client", null, "CN=devhealth-client,O=sre"));
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
                new KubernetesUser("jane", "", List.of("sre", "oncall"), Map.of()), "CN=jane,O=sre,O=oncall"));
        assertThat(((AccessPolicy.Allowed) new AccessPolicy(true, null, List.of()).check(null, OPERATOR)).user())
                .as("without Kubernetes: every query").isNull();
    }

    @Test
    void shouldRefuseACertificateNamingAKubernetesSystemUserOrGroup() {
        AccessPolicy kubernetes = new AccessPolicy(true, null, List.of(), new FakeReviews(), List.of("devhealth-query"));
        AccessPolicy alone = new AccessPolicy(true, null, List.of());
        // What a holder of the CA's key would mint to be a cluster administrator, a node or a service account.
        List<X500Principal> minted = List.of(new X500Principal("CN=jane, O=system:masters"),
                new X500Principal("CN=jane, O=sre, O=system:masters"), new X500Principal("CN=system:node:gpu-node-1, O=system:nodes"),
                new X500Principal("CN=system:serviceaccount:kube-system:default, O=sre"), new X500Principal("CN=system:admin"));

        for (AccessPolicy policy : List.of(kubernetes, alone)) {
            assertThat(minted).allSatisfy(subject -> assertThat(policy.check(null, subject)).as(subject.getName())
                    .isInstanceOfSatisfying(AccessPolicy.Denied.class, denied -> {
                        assertThat(denied.status()).isEqualTo(403);
                        assertThat(denied.reason()).isEqualTo("system-identity");
                        assertThat(denied.message()).contains("system:");
                    }));
        }
        assertThat(kubernetes.check(null, new X500Principal("CN=jane, O=System:masters, O=sre-system:masters")))
                .as("Kubernetes names compare case-sensitively and by prefix: these groups are not its own")
                .isInstanceOf(AccessPolicy.Allowed.class);
    }

    @Test
    void shouldRefuseAKubernetesSystemGroupAPeerNamesAsCaller() {
        AccessPolicy policy = new AccessPolicy(true, tokens, List.of(), List.of("CN=processor,O=fleet"), new FakeReviews(),
                List.of("devhealth-query"));

        assertThat(policy.check(null, PEER, "CN=jane,O=system:masters")).isInstanceOfSatisfying(AccessPolicy.Denied.class, denied -> {
            assertThat(denied.status()).isEqualTo(403);
            assertThat(denied.reason()).isEqualTo("system-identity");
        });
    }

    private static final X500Principal PEER = new X500Principal("CN=processor, O=fleet");

    /** Allows the operator's certificate only; the processors' own certificate (the peer) may name callers but not query as itself. */
    private AccessPolicy withPeers(KubernetesReviews reviews) {
        return new AccessPolicy(true, tokens, List.of("CN=devhealth-client,O=sre"), List.of("CN=processor,O=fleet"), reviews,
                List.of("devhealth-query"));
    }

    @Test
    void shouldAuthorizeTheCallerAPeerNamesAsIfItHadConnectedItself() {
        AccessPolicy policy = withPeers(null);

        assertThat(policy.check(null, PEER, "CN=devhealth-client,O=sre")).isEqualTo(new AccessPolicy.Allowed("cert:devhealth-client",
                null, "CN=devhealth-client,O=sre"));
        assertThat(policy.check(null, PEER, "cn=devhealth-client, o=sre")).as("compared as a DN, like a certificate's subject")
                .isInstanceOf(AccessPolicy.Allowed.class);
        assertThat(policy.check(null, PEER, "CN=collector-node-1,O=fleet")).as("a caller outside the allowed principals")
                .isInstanceOfSatisfying(AccessPolicy.Denied.class, denied -> {
                    assertThat(denied.status()).isEqualTo(403);
                    assertThat(denied.reason()).isEqualTo("principal");
                });
        assertThat(policy.check(null, PEER, null)).as("the peer as itself").isInstanceOfSatisfying(AccessPolicy.Denied.class,
                denied -> assertThat(denied.status()).isEqualTo(403));
    }

    @Test
    void shouldRefuseACallerNamedByAnyoneButAPeer() {
        AccessPolicy policy = withPeers(null);

        for (X500Principal client : new X500Principal[] {OPERATOR, new X500Principal("CN=processor, O=elsewhere"), null}) {
            assertThat(policy.check(null, client, "CN=devhealth-client,O=sre")).as("from %s", client)
                    .isInstanceOfSatisfying(AccessPolicy.Denied.class, denied -> {
                        assertThat(denied.status()).isEqualTo(403);
                        assertThat(denied.reason()).isEqualTo("caller-subject-from-non-peer");
                    });
        }
        assertThat(policy.check("Bearer s3cret-token", null, "CN=devhealth-client,O=sre")).as("a token caller naming someone")
                .isInstanceOfSatisfying(AccessPolicy.Denied.class, denied -> assertThat(denied.status()).isEqualTo(403));
        assertThat(new AccessPolicy(true, null, List.of()).check(null, PEER, "CN=devhealth-client,O=sre")).as("no peers configured")
                .isInstanceOfSatisfying(AccessPolicy.Denied.class, denied -> assertThat(denied.status()).isEqualTo(403));
        assertThat(AccessPolicy.open().check(null, null, "CN=devhealth-client,O=sre")).as("even with nothing else asked")
                .isInstanceOfSatisfying(AccessPolicy.Denied.class, denied -> assertThat(denied.status()).isEqualTo(403));
    }

    @Test
    void shouldAnswer400ForACallerSubjectThatIsNoDistinguishedName() {
        assertThat(withPeers(null).check(null, PEER, "devhealth-client, sre")).isInstanceOfSatisfying(AccessPolicy.Denied.class,
                denied -> {
                    assertThat(denied.status()).isEqualTo(400);
                    assertThat(denied.reason()).isEqualTo("caller-subject-malformed");
                    assertThat(denied.message()).doesNotContain("devhealth-client");
                });
    }

    @Test
    void shouldLetATokenDecideForAPeerAndNameNoSubjectForIt() {
        AccessPolicy policy = withPeers(null);

        assertThat(policy.check("Bearer s3cret-token", PEER, null)).isEqualTo(new AccessPolicy.Allowed("token"));
        assertThat(policy.check("Bearer s3cret-token", PEER, "CN=collector-node-1,O=fleet")).as("the token, not the named subject")
                .isEqualTo(new AccessPolicy.Allowed("token"));
        assertThat(((AccessPolicy.Allowed) policy.check("Bearer s3cret-token", PEER, null)).callerSubject())
                .as("nothing to name when forwarding").isNull();
    }

    @Test
    void shouldMapANamedCallerToItsOwnKubernetesUserNotThePeers() {
        AccessPolicy policy = new AccessPolicy(true, null, List.of(), List.of("CN=processor,O=fleet"), new FakeReviews(),
                List.of("devhealth-query"));

        assertThat(policy.check(null, PEER, "CN=jane,O=sre,O=oncall")).isEqualTo(new AccessPolicy.Allowed("cert:jane",
                new KubernetesUser("jane", "", List.of("sre", "oncall"), Map.of()), "CN=jane,O=sre,O=oncall"));
        assertThat(policy.check(null, PEER, null)).isEqualTo(new AccessPolicy.Allowed("cert:processor",
                new KubernetesUser("processor", "", List.of("fleet"), Map.of()), "CN=processor,O=fleet"));
    }

    @Test
    void shouldNameAnySubjectInPrintableAsciiAndReadItBackUnchanged() {
        X500Principal accented = new X500Principal("CN=Jos\u00e9 \u00d1u\u00f1ez, O=\u00e9quipe\\, sant\u00e9");
        AccessPolicy direct = new AccessPolicy(true, null, List.of(), List.of("CN=processor,O=fleet"), new FakeReviews(),
                List.of("devhealth-query"));

        String named = ((AccessPolicy.Allowed) direct.check(null, accented)).callerSubject();
        AccessPolicy.Allowed atOwner = (AccessPolicy.Allowed) direct.check(null, PEER, named);

        assertThat(named).matches("[\\x20-\\x7e]+").contains("\\C3\\A9");
        assertThat(atOwner.user()).isEqualTo(new KubernetesUser("Jos\u00e9 \u00d1u\u00f1ez", "", List.of("\u00e9quipe, sant\u00e9"),
                Map.of()));
        assertThat(atOwner.callerSubject()).as("forwarded again, the same header").isEqualTo(named);
        assertThat(new AccessPolicy(true, null, List.of(accented.getName(X500Principal.RFC2253)), List.of("CN=processor,O=fleet"), null,
                List.of()).check(null, PEER, named)).as("matches the allowed principal it came from")
                .isInstanceOf(AccessPolicy.Allowed.class);
    }
}
