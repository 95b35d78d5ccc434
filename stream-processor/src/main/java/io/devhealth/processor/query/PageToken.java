package io.devhealth.processor.query;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * Opaque continue tokens. History pages resume at a timestamp, skipping the entries of that same
 * millisecond already returned (history is append-only, so this is stable); device lists resume
 * after the last key returned.
 */
final class PageToken {

    private PageToken() {}

    record HistoryPosition(long timestamp, int skip) {}

    static String history(long timestamp, int skip) {
        return encode("h:" + timestamp + ":" + skip);
    }

    static HistoryPosition parseHistory(String token) {
        String[] parts = decode(token).split(":");
        if (parts.length != 3 || !parts[0].equals("h")) {
            throw QueryException.badRequest("invalid continue token");
        }
        try {
            return new HistoryPosition(Long.parseLong(parts[1]), Integer.parseInt(parts[2]));
        } catch (NumberFormatException e) {
            throw QueryException.badRequest("invalid continue token");
        }
    }

    static String afterKey(String key) {
        return encode("k:" + key);
    }

    static String parseAfterKey(String token) {
        String decoded = decode(token);
        if (!decoded.startsWith("k:")) {
            throw QueryException.badRequest("invalid continue token");
        }
        return decoded.substring(2);
    }

    private static String encode(String value) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(value.getBytes(StandardCharsets.UTF_8));
    }

    private static String decode(String token) {
        try {
            return new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw QueryException.badRequest("invalid continue token");
        }
    }
}
