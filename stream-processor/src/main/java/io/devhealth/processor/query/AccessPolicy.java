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
    private final List<String> allowedPrincipals;

    AccessPolicy(boolean enabled, BearerTokens tokens, List<String> allowedPrincipals) {
        this.enabled = enabled;
        this.tokens = tokens;
        this.allowedPrincipals = List.copyOf(allowedPrincipals);
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
        String dn = subject.getName(X500Principal.RFC2253);
        String cn = commonName(subject);
        for (String allowed : allowedPrincipals) {
            if (allowed.equals(cn) || sameName(allowed, dn)) {
                return true;
            }
        }
        return false;
    }

    private static boolean sameName(String configured, String dn) {
        try {
            return new LdapName(configured).equals(new LdapName(dn));
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
