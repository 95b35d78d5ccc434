package io.devhealth.processor.query;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.security.auth.x500.X500Principal;

/**
 * Decides who is asking: by a bearer token ({@link BearerTokens}, or the Kubernetes API server's
 * {@code TokenReview}), or by a client certificate the TLS layer verified against the truststore (and,
 * when configured, whose subject is allowed). Holds no HTTP: the filter hands in the {@code Authorization}
 * header and the verified peer subject.
 *
 * <p>A token, when sent, decides; a certificate authenticates only a request without one. An instance
 * that forwards a query presents its own certificate and the caller's token: the owner must authorize the
 * caller, not the forwarding instance.
 *
 * <p>With Kubernetes authorization on, a caller the API server authenticated carries its
 * {@link KubernetesUser}, and so does a certificate, mapped as the API server maps client certificates
 * (user = CN, groups = the O values; k8s.io/apiserver pkg/authentication/request/x509/x509.go,
 * {@code CommonNameUserConversion}): each query is then authorized by a {@code SubjectAccessReview}. A
 * static token ({@link BearerTokens}) stays a credential of this service alone, which RBAC does not know:
 * it reads everything, as without Kubernetes authorization.
 */
final class AccessPolicy {

    /** What the caller is told in {@code WWW-Authenticate} (RFC 6750). */
    static final String CHALLENGE = "Bearer realm=\"devhealth\"";

    sealed interface Decision permits Allowed, Denied {}

    /**
     * @param principal who is asking, for logs: {@code token}, {@code user:NAME}, {@code cert:CN} or {@code anonymous}
     * @param user whom each query is authorized for by Kubernetes RBAC; null = every query (no Kubernetes authorization,
     *        or a static token)
     */
    record Allowed(String principal, KubernetesUser user) implements Decision {
        Allowed(String principal) {
            this(principal, null);
        }
    }

    /** @param status 401 or 403; @param message for the caller (never echoes the credentials); @param challenge WWW-Authenticate or null */
    record Denied(int status, String message, String challenge, String reason) implements Decision {}

    private final boolean enabled;
    private final BearerTokens tokens;
    private final List<LdapName> allowedPrincipals;
    private final KubernetesReviews kubernetes;
    private final List<String> audiences;

    /** @param allowedPrincipals full distinguished names ({@link #distinguishedName}); empty = any verified certificate */
    AccessPolicy(boolean enabled, BearerTokens tokens, List<String> allowedPrincipals) {
        this(enabled, tokens, allowedPrincipals, null, List.of());
    }

    /**
     * @param kubernetes who authenticates tokens the static ones do not match, and makes every caller subject to
     *        authorization; null = none
     * @param audiences what such a token must have been issued for
     */
    AccessPolicy(boolean enabled, BearerTokens tokens, List<String> allowedPrincipals, KubernetesReviews kubernetes,
            List<String> audiences) {
        this.enabled = enabled;
        this.tokens = tokens;
        this.allowedPrincipals = allowedPrincipals.stream().map(AccessPolicy::distinguishedName).toList();
        this.kubernetes = kubernetes;
        this.audiences = List.copyOf(audiences);
    }

    /**
     * {@code name} as a distinguished name, compared by its attributes whatever the spacing or case of
     * their types. A bare common name is refused: any CA in the truststore may issue a certificate with
     * a given CN under another organization, so only the whole subject says who is asking.
     *
     * @throws IllegalArgumentException when {@code name} is not a DN of {@code type=value} attributes
     */
    static LdapName distinguishedName(String name) {
        try {
            LdapName dn = new LdapName(name);
            if (dn.isEmpty()) {
                throw new IllegalArgumentException("an empty name is no certificate subject");
            }
            return dn;
        } catch (InvalidNameException e) {
            throw new IllegalArgumentException("not a distinguished name such as CN=client,O=example: " + Excerpt.of(name));
        }
    }

    static AccessPolicy open() {
        return new AccessPolicy(false, null, List.of());
    }

    boolean enabled() {
        return enabled;
    }

    Decision check(String authorization, X500Principal verifiedClient) {
        if (!enabled) {
            return new Allowed("anonymous");
        }
        boolean certificateRefused = verifiedClient != null && !principalAllowed(verifiedClient);
        AuthorizationHeader presented = AuthorizationHeader.parse(authorization);
        if (presented.presented() == AuthorizationHeader.Presented.NONE) {
            if (verifiedClient == null) {
                return new Denied(401, "authentication required: send Authorization: Bearer <token>", CHALLENGE, "missing");
            }
            return certificateRefused ? forbidden() : certificate(verifiedClient);
        }
        if (presented.presented() == AuthorizationHeader.Presented.OTHER_SCHEME) {
            return new Denied(401, "only bearer tokens are accepted (Authorization: Bearer <token>)",
                    CHALLENGE + ", error=\"invalid_request\"", "scheme");
        }
        String token = presented.token();
        if (token != null && tokens != null && tokens.matches(token)) {
            return new Allowed("token");
        }
        if (token != null && kubernetes != null) {
            Optional<KubernetesUser> user;
            try {
                user = kubernetes.authenticate(token, audiences);
            } catch (KubernetesReviews.Unavailable e) {
                return new Denied(503, e.getMessage(), null, "unavailable");
            }
            if (user.isPresent()) {
                return new Allowed("user:" + user.get().name(), user.get());
            }
        }
        return certificateRefused ? forbidden() : new Denied(401, "invalid bearer token", CHALLENGE + ", error=\"invalid_token\"", "invalid");
    }

    /** A verified, allowed certificate: everything without Kubernetes authorization, else what RBAC grants its CN and O values. */
    private Decision certificate(X500Principal subject) {
        String commonName = commonName(subject);
        if (kubernetes == null) {
            return new Allowed("cert:" + commonName);
        }
        return new Allowed("cert:" + commonName, new KubernetesUser(commonName, "", organizations(subject), Map.of()));
    }

    private static Denied forbidden() {
        return new Denied(403, "this client certificate may not query", null, "principal");
    }

    private boolean principalAllowed(X500Principal subject) {
        if (allowedPrincipals.isEmpty()) {
            return true;
        }
        try {
            return allowedPrincipals.contains(new LdapName(subject.getName(X500Principal.RFC2253)));
        } catch (InvalidNameException e) {
            return false;
        }
    }

    /** The subject's O values, in order: the groups the API server gives a client certificate. */
    static List<String> organizations(X500Principal subject) {
        List<String> values = new ArrayList<>();
        try {
            for (Rdn rdn : new LdapName(subject.getName(X500Principal.RFC2253)).getRdns()) {
                if (rdn.getType().toUpperCase(Locale.ROOT).equals("O")) {
                    values.add(rdn.getValue().toString());
                }
            }
        } catch (InvalidNameException e) {
            return List.of();
        }
        // LdapName lists RDNs from the last (rightmost) to the first.
        java.util.Collections.reverse(values);
        return values;
    }

    static String commonName(X500Principal subject) {
        try {
            for (Rdn rdn : new LdapName(subject.getName(X500Principal.RFC2253)).getRdns()) {
                if (rdn.getType().toUpperCase(Locale.ROOT).equals("CN")) {
                    return rdn.getValue().toString();
                }
            }
        } catch (InvalidNameException e) {
            // fall through to the full name
        }
        return subject.getName(X500Principal.RFC2253);
    }
}
