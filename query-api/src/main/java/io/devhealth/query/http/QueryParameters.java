package io.devhealth.query.http;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The decoded path segments under {@code /v1/} and the query parameters of one request, checked as
 * they are read: percent-encoding, unknown or repeated parameters, RFC 3339 times, limit bounds and
 * the length of continue tokens. Every failure is a {@link QueryException} 400 whose message shows
 * at most an {@link Excerpt} of the input.
 */
public final class QueryParameters {

    public static final int DEFAULT_LIMIT = 100;
    static final int MAX_LIMIT = 1000;
    /** RFC 3339 date-time (section 5.6): seconds required, fraction optional, Z or a numeric offset. */
    private static final Pattern RFC_3339 = Pattern.compile(
            "\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?([Zz]|[+-]\\d{2}:\\d{2})");

    private final List<String> segments;
    private final Map<String, String> params;

    private QueryParameters(List<String> segments, Map<String, String> params) {
        this.segments = segments;
        this.params = params;
    }

    /** Parses {@code uri}, whose path starts with {@code prefix}. */
    public static QueryParameters parse(URI uri, String prefix) {
        String rawPath = uri.getRawPath();
        List<String> segments = new ArrayList<>();
        for (String raw : rawPath.substring(prefix.length()).split("/", -1)) {
            if (raw.isEmpty()) {
                throw QueryException.badRequest("empty path segment in " + Excerpt.of(rawPath));
            }
            segments.add(decode(raw, "path segment"));
        }
        Map<String, String> params = new HashMap<>();
        if (uri.getRawQuery() != null) {
            for (String pair : uri.getRawQuery().split("&")) {
                if (pair.isEmpty()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                String key = decode(eq < 0 ? pair : pair.substring(0, eq), "parameter name");
                String value = eq < 0 ? "" : decode(pair.substring(eq + 1), "parameter value");
                if (params.put(key, value) != null) {
                    throw QueryException.badRequest("parameter " + Excerpt.of(key) + " given more than once");
                }
            }
        }
        return new QueryParameters(List.copyOf(segments), params);
    }

    private static String decode(String raw, String what) {
        try {
            // '+' stays '+' in paths; in the query it is a space, which no valid value contains anyway.
            return URLDecoder.decode(raw.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw QueryException.badRequest("malformed percent-encoding in " + what + " " + Excerpt.of(raw));
        }
    }

    public List<String> segments() {
        return segments;
    }

    /** Rejects parameters this endpoint does not know (a typo must not silently widen a query). */
    public QueryParameters allowOnly(String... names) {
        Set<String> allowed = Set.of(names);
        for (String key : params.keySet()) {
            if (!allowed.contains(key)) {
                throw QueryException.badRequest("unknown parameter " + Excerpt.of(key) + "; this endpoint takes "
                        + (allowed.isEmpty() ? "none" : String.join(", ", new TreeSet<>(allowed))));
            }
        }
        return this;
    }

    public Optional<Instant> instant(String name) {
        String value = params.get(name);
        if (value == null || value.isEmpty()) {
            return Optional.empty();
        }
        if (!RFC_3339.matcher(value).matches()) {
            throw badTime(name, value);
        }
        try {
            return Optional.of(OffsetDateTime.parse(value.toUpperCase(java.util.Locale.ROOT)).toInstant());
        } catch (DateTimeParseException e) {
            throw badTime(name, value);
        }
    }

    private static QueryException badTime(String name, String value) {
        return QueryException.badRequest(name + " must be an RFC 3339 time such as 2026-11-29T10:00:00Z, got " + Excerpt.of(value));
    }

    public int limit() {
        String value = params.get("limit");
        if (value == null || value.isEmpty()) {
            return DEFAULT_LIMIT;
        }
        if (value.length() <= 4 && value.chars().allMatch(Character::isDigit)) {
            int limit = Integer.parseInt(value);
            if (limit >= 1 && limit <= MAX_LIMIT) {
                return limit;
            }
        }
        throw QueryException.badRequest("limit must be an integer from 1 to " + MAX_LIMIT + ", got " + Excerpt.of(value));
    }

    /** A parameter's decoded value, if given (callers validate its form). */
    public Optional<String> value(String name) {
        String value = params.get(name);
        return value == null || value.isEmpty() ? Optional.empty() : Optional.of(value);
    }

    /** The continue token, if any; its signature is checked by {@link PageTokens}. */
    public Optional<String> continueToken() {
        String value = params.get("continue");
        if (value == null || value.isEmpty()) {
            return Optional.empty();
        }
        if (value.length() > PageTokens.MAX_LENGTH) {
            throw QueryException.badRequest("invalid continue token (too long); start again without it");
        }
        return Optional.of(value);
    }
}
