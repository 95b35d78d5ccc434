package io.devhealth.query.access;

/**
 * What a request's {@code Authorization} header presents, read in this one place for the queries
 * ({@link AccessPolicy}) and for node keys ({@link NodeKeyIssuer}): a bearer token (RFC 6750, the
 * scheme in any case), nothing, another scheme, or a bearer token that no credential can be (empty,
 * or longer than {@link BearerTokens#MAX_TOKEN_LENGTH}), which is refused before it costs a digest or
 * a {@code TokenReview}.
 *
 * @param presented which of these it is
 * @param token the token when {@link Presented#TOKEN}, else null
 */
public record AuthorizationHeader(Presented presented, String token) {

    enum Presented { TOKEN, NONE, OTHER_SCHEME, UNUSABLE_TOKEN }

    private static final AuthorizationHeader NONE = new AuthorizationHeader(Presented.NONE, null);
    private static final AuthorizationHeader OTHER_SCHEME = new AuthorizationHeader(Presented.OTHER_SCHEME, null);
    private static final AuthorizationHeader UNUSABLE_TOKEN = new AuthorizationHeader(Presented.UNUSABLE_TOKEN, null);

    /** @param value the header as sent; null when there is none */
    static AuthorizationHeader parse(String value) {
        if (value == null || value.isBlank()) {
            return NONE;
        }
        int space = value.indexOf(' ');
        if (space < 0 || !value.substring(0, space).equalsIgnoreCase("Bearer")) {
            return OTHER_SCHEME;
        }
        String token = value.substring(space + 1).strip();
        if (token.isEmpty() || token.length() > BearerTokens.MAX_TOKEN_LENGTH) {
            return UNUSABLE_TOKEN;
        }
        return new AuthorizationHeader(Presented.TOKEN, token);
    }

    /** Never the token: this value may end up in a log line or an assertion message. */
    @Override
    public String toString() {
        return "AuthorizationHeader[" + presented + "]";
    }
}
