package io.devhealth.query.access;

import io.devhealth.query.http.Excerpt;
import java.nio.charset.StandardCharsets;
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
 * header, the verified client certificate's subject and the {@value #CALLER_SUBJECT_HEADER} header.
 *
 * <p>A token, when sent, decides; a certificate authenticates only a request without one. An instance
 * that forwards a query presents its own certificate, and the caller's credential: a token caller's
 * {@code Authorization} header, or, for a caller its certificate authenticated, that certificate's
 * subject in {@value #CALLER_SUBJECT_HEADER} ({@link Allowed#callerSubject()}). The owner authorizes
 * that caller, never the forwarding instance: a named subject goes through the allowed principals and
 * Kubernetes RBAC exactly as if the caller had connected itself. Only a peer may name a caller: a
 * client certificate whose full subject is one of the peer principals (the processor instances' own
 * certificate). The header from anyone else, with or without a certificate, is refused (403), so that
 * no caller can claim another's identity by sending it.
 *
 * <p>With Kubernetes authorization on, a caller the API server authenticated carries its
 * {@link KubernetesUser}, and so does a certificate, mapped as the API server maps client certificates
 * (user = CN, groups = the O values; k8s.io/apiserver pkg/authentication/request/x509/x509.go,
 * {@code CommonNameUserConversion}): each query is then authorized by a {@code SubjectAccessReview}. A
 * certificate whose CN or an O value starts with {@value #SYSTEM_PREFIX} is refused (403,
 * {@code system-identity}) whether or not Kubernetes decides, and so is such a caller named by a peer. A
 * static token ({@link BearerTokens}) stays a credential of this service alone, which RBAC does not know:
 * it reads everything, as without Kubernetes authorization.
 */
public final class AccessPolicy {

    /** What the caller is told in {@code WWW-Authenticate} (RFC 6750). */
    static final String CHALLENGE = "Bearer realm=\"devhealth\"";
    /**
     * Names the certificate caller of a forwarded request: its subject as an RFC 2253 DN, every character
     * outside printable ASCII written as its UTF-8 bytes in {@code \XX} pairs (RFC 2253 section 2.4), so
     * that any subject travels in an HTTP header unchanged.
     */
    public static final String CALLER_SUBJECT_HEADER = "X-Devhealth-Caller-Subject";
    private static final char[] HEX = "0123456789ABCDEF".toCharArray();
    /** The prefix of the users and groups Kubernetes defines itself ({@code system:masters}, {@code system:node:…}). */
    static final String SYSTEM_PREFIX = "system:";

    sealed interface Decision permits Allowed, Denied {}

    /**
     * @param principal who is asking, for logs: {@code token}, {@code user:NAME}, {@code cert:CN} or {@code anonymous}
     * @param user whom each query is authorized for by Kubernetes RBAC; null = every query (no Kubernetes authorization,
     *        or a static token)
     * @param callerSubject the subject of the certificate that authenticated the caller, as a request forwarded on
     *        its behalf names it in {@value #CALLER_SUBJECT_HEADER}; null when a token did, or nothing
     */
    public record Allowed(String principal, KubernetesUser user, String callerSubject) implements Decision {
        Allowed(String principal) {
            this(principal, null, null);
        }

        Allowed(String principal, KubernetesUser user) {
            this(principal, user, null);
        }
    }

    /**
     * @param status 400, 401, 403 or 503; @param message for the caller (never echoes the credentials);
     * @param challenge WWW-Authenticate or null; @param reason for logs and the refusal counter
     */
    record Denied(int status, String message, String challenge, String reason) implements Decision {}

    private final boolean enabled;
    private final BearerTokens tokens;
    private final List<LdapName> allowedPrincipals;
    private final List<LdapName> peerPrincipals;
    private final KubernetesReviews kubernetes;
    private final List<String> audiences;

    /** @param allowedPrincipals full distinguished names ({@link #distinguishedName}); empty = any verified certificate */
    public AccessPolicy(boolean enabled, BearerTokens tokens, List<String> allowedPrincipals) {
        this(enabled, tokens, allowedPrincipals, null, List.of());
    }

    /**
     * @param kubernetes who authenticates tokens the static ones do not match, and makes every caller subject to
     *        authorization; null = none
     * @param audiences what such a token must have been issued for
     */
    public AccessPolicy(boolean enabled, BearerTokens tokens, List<String> allowedPrincipals, KubernetesReviews kubernetes,
            List<String> audiences) {
        this(enabled, tokens, allowedPrincipals, List.of(), kubernetes, audiences);
    }

    /** @param peerPrincipals full distinguished names of the certificates that may name a forwarded request's caller */
    public AccessPolicy(boolean enabled, BearerTokens tokens, List<String> allowedPrincipals, List<String> peerPrincipals,
            KubernetesReviews kubernetes, List<String> audiences) {
        this.enabled = enabled;
        this.tokens = tokens;
        this.allowedPrincipals = allowedPrincipals.stream().map(AccessPolicy::distinguishedName).toList();
        this.peerPrincipals = peerPrincipals.stream().map(AccessPolicy::distinguishedName).toList();
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

    /** A request without {@value #CALLER_SUBJECT_HEADER}: one not forwarded, or forwarded for a token caller. */
    Decision check(String authorization, X500Principal verifiedClient) {
        return check(authorization, verifiedClient, null);
    }

    /**
     * @param authorization the {@code Authorization} header; null when there is none
     * @param verifiedClient the subject of the client certificate the TLS layer verified; null when there is none
     * @param callerSubject the {@value #CALLER_SUBJECT_HEADER} header; null when there is none
     */
    Decision check(String authorization, X500Principal verifiedClient, String callerSubject) {
        LdapName client = verifiedClient == null ? null : nameOf(verifiedClient);
        // Refused even where nothing else is asked (query.insecure): no caller names itself to this API.
        if (callerSubject != null && (client == null || !peerPrincipals.contains(client))) {
            return new Denied(403, "only another instance of this processor may name the caller (" + CALLER_SUBJECT_HEADER + ")",
                    null, "caller-subject-from-non-peer");
        }
        if (!enabled) {
            return new Allowed("anonymous");
        }
        AuthorizationHeader presented = AuthorizationHeader.parse(authorization);
        // A peer names the caller only for one that sent no token; with a token, the token decides.
        if (callerSubject != null && presented.presented() == AuthorizationHeader.Presented.NONE) {
            return namedCaller(callerSubject);
        }
        boolean certificateRefused = verifiedClient != null && (client == null || !principalAllowed(client));
        if (presented.presented() == AuthorizationHeader.Presented.NONE) {
            if (verifiedClient == null) {
                return new Denied(401, "authentication required: send Authorization: Bearer <token>", CHALLENGE, "missing");
            }
            return certificateRefused ? forbidden() : certificate(client);
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

    /** The certificate caller a peer named, authorized as if it had connected itself. */
    private Decision namedCaller(String callerSubject) {
        LdapName named;
        try {
            // Not distinguishedName(): a certificate may have an empty subject (its names in the SAN only), and the
            // caller it authenticated is named as it is.
            named = new LdapName(callerSubject);
        } catch (InvalidNameException e) {
            return new Denied(400, CALLER_SUBJECT_HEADER + " is not a distinguished name", null, "caller-subject-malformed");
        }
        return principalAllowed(named) ? certificate(named) : forbidden();
    }

    /**
     * A verified, allowed certificate, or the one a peer named: everything without Kubernetes authorization, else what
     * RBAC grants its CN and O values.
     */
    private Decision certificate(LdapName subject) {
        String commonName = commonName(subject);
        List<String> organizations = organizations(subject);
        // Kubernetes reserves "system:" for its own users and groups (system:masters bypasses RBAC altogether), and
        // none of them is a person or tool holding a certificate of this service's CA: whoever holds that CA's key
        // could otherwise mint O=system:masters and read every namespace. Refused with or without Kubernetes
        // authorization, so that switching it on never turns such a certificate into a cluster administrator.
        if (isSystemName(commonName) || organizations.stream().anyMatch(AccessPolicy::isSystemName)) {
            return new Denied(403, "a client certificate may not name a Kubernetes system: user or group (CN or O)", null,
                    "system-identity");
        }
        KubernetesUser user = kubernetes == null ? null : new KubernetesUser(commonName, "", organizations, Map.of());
        return new Allowed("cert:" + commonName, user, forwardable(subject));
    }

    /** Whether Kubernetes reserves {@code name} for itself: its user and group names compare case-sensitively. */
    static boolean isSystemName(String name) {
        return name.startsWith(SYSTEM_PREFIX);
    }

    private static Denied forbidden() {
        return new Denied(403, "this client certificate may not query", null, "principal");
    }

    private boolean principalAllowed(LdapName subject) {
        return allowedPrincipals.isEmpty() || allowedPrincipals.contains(subject);
    }

    /** The certificate subject as a distinguished name; null when it cannot be read as one, which no list names. */
    private static LdapName nameOf(X500Principal subject) {
        try {
            return new LdapName(subject.getName(X500Principal.RFC2253));
        } catch (InvalidNameException e) {
            return null;
        }
    }

    /** {@code subject} as {@value #CALLER_SUBJECT_HEADER} carries it: printable ASCII, the rest in UTF-8 {@code \XX} pairs. */
    private static String forwardable(LdapName subject) {
        StringBuilder out = new StringBuilder();
        for (byte b : subject.toString().getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if (c >= 0x20 && c < 0x7f) {
                out.append((char) c);
            } else {
                out.append('\\').append(HEX[c >> 4]).append(HEX[c & 0xf]);
            }
        }
        return out.toString();
    }

    /** The subject's O values, in order: the groups the API server gives a client certificate. */
    static List<String> organizations(LdapName subject) {
        List<String> values = new ArrayList<>();
        for (Rdn rdn : subject.getRdns()) {
            if (rdn.getType().toUpperCase(Locale.ROOT).equals("O")) {
                values.add(rdn.getValue().toString());
            }
        }
        // LdapName lists RDNs from the last (rightmost) to the first.
        java.util.Collections.reverse(values);
        return values;
    }

    /** The subject's CN; its whole name when it has none. */
    static String commonName(LdapName subject) {
        for (Rdn rdn : subject.getRdns()) {
            if (rdn.getType().toUpperCase(Locale.ROOT).equals("CN")) {
                return rdn.getValue().toString();
            }
        }
        return subject.toString();
    }
}
