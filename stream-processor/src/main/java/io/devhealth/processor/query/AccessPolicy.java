package io.devhealth.processor.query;

import java.util.List;
import java.util.Locale;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.security.auth.x500.X500Principal;

/**
 * Decides whether a request may read: by a client certificate the TLS layer verified against the
 * truststore (and, when configured, whose subject is allowed), or by a bearer token
 * ({@link BearerTokens}). Holds no HTTP: the filter hands in the {@code Authorization} header and
 * the verified peer subject.
 */
final class AccessPolicy {

    /** What the caller is told in {@code WWW-Authenticate} (RFC 6750). */
    static final String CHALLENGE = "Bearer realm=\"devhealth\"";

    sealed interface Decision permits Allowed, Denied {}

    /** @param principal who is asking, for logs: {@code token}, {@code cert:CN} or {@code anonymous} */
    record Allowed(String principal) implements Decision {}

    /** @param status 401 or 403; @param message for the caller (never echoes the credentials); @param challenge WWW-Authenticate or null */
    record Denied(int status, String message, String challenge, String reason) implements Decision {}

    private final boolean enabled;
    private final BearerTokens tokens;
    private final List<LdapName> allowedPrincipals;

    /** @param allowedPrincipals full distinguished names ({@link #distinguishedName}); empty = any verified certificate */
    AccessPolicy(boolean enabled, BearerTokens tokens, List<String> allowedPrincipals) {
        this.enabled = enabled;
        this.tokens = tokens;
        this.allowedPrincipals = allowedPrincipals.stream().map(AccessPolicy::distinguishedName).toList();
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
        boolean certificateRefused = false;
        if (verifiedClient != null) {
            if (principalAllowed(verifiedClient)) {
                return new Allowed("cert:" + commonName(verifiedClient));
            }
            certificateRefused = true;
        }
        if (authorization == null || authorization.isBlank()) {
            return certificateRefused ? forbidden() : new Denied(401, "authentication required: send Authorization: Bearer <token>",
                    CHALLENGE, "missing");
        }
        int space = authorization.indexOf(' ');
        if (space < 0 || !authorization.substring(0, space).equalsIgnoreCase("Bearer")) {
            return new Denied(401, "only bearer tokens are accepted (Authorization: Bearer <token>)",
                    CHALLENGE + ", error=\"invalid_request\"", "scheme");
        }
        if (tokens != null && tokens.matches(authorization.substring(space + 1).strip())) {
            return new Allowed("token");
        }
        return certificateRefused ? forbidden() : new Denied(401, "invalid bearer token", CHALLENGE + ", error=\"invalid_token\"", "invalid");
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
