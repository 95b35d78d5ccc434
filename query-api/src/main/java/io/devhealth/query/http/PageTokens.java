package io.devhealth.query.http;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Opaque continue tokens, signed (HMAC-SHA256) and bound to the query they page through, so that a
 * tampered or foreign token is a clear 400 rather than a page from somewhere else. History pages
 * resume at a timestamp, skipping the entries of that same millisecond already returned (history is
 * append-only, so this is stable); device lists resume after the last key returned.
 *
 * <p>Format: {@code base64url(payload) "." base64url(first 16 bytes of HMAC(scope NUL payload))}.
 */
public final class PageTokens {

    public static final int MAX_LENGTH = 1024;
    private static final int MAC_BYTES = 16;
    private static final String ALGORITHM = "HmacSHA256";
    private static final String INVALID = "invalid continue token: use the one the previous page returned, or start again without it";

    private final SecretKeySpec key;

    PageTokens(byte[] secret) {
        this.key = new SecretKeySpec(secret.clone(), ALGORITHM);
    }

    /** Tokens signed with {@code secret}, or with a random key (valid for this process only) when it is null. */
    public static PageTokens withSecret(String secret) {
        if (secret != null && !secret.isEmpty()) {
            return new PageTokens(secret.getBytes(StandardCharsets.UTF_8));
        }
        byte[] random = new byte[32];
        new SecureRandom().nextBytes(random);
        return new PageTokens(random);
    }

    public record HistoryPosition(long timestamp, int skip) {}

    public String history(String scope, long timestamp, int skip) {
        return sign(scope, "h:" + timestamp + ":" + skip);
    }

    public HistoryPosition parseHistory(String scope, String token) {
        String[] parts = verify(scope, token).split(":");
        if (parts.length != 3 || !parts[0].equals("h")) {
            throw QueryException.badRequest(INVALID);
        }
        try {
            HistoryPosition position = new HistoryPosition(Long.parseLong(parts[1]), Integer.parseInt(parts[2]));
            if (position.skip() < 0) {
                throw QueryException.badRequest(INVALID);
            }
            return position;
        } catch (NumberFormatException e) {
            throw QueryException.badRequest(INVALID);
        }
    }

    public String afterKey(String scope, String key) {
        return sign(scope, "k:" + key);
    }

    public String parseAfterKey(String scope, String token) {
        String payload = verify(scope, token);
        if (!payload.startsWith("k:")) {
            throw QueryException.badRequest(INVALID);
        }
        return payload.substring(2);
    }

    private String sign(String scope, String payload) {
        byte[] bytes = payload.getBytes(StandardCharsets.UTF_8);
        return encode(bytes) + "." + encode(mac(scope, bytes));
    }

    private String verify(String scope, String token) {
        if (token.length() > MAX_LENGTH) {
            throw QueryException.badRequest(INVALID);
        }
        int dot = token.indexOf('.');
        if (dot < 0) {
            throw QueryException.badRequest(INVALID);
        }
        try {
            byte[] payload = Base64.getUrlDecoder().decode(token.substring(0, dot));
            byte[] signature = Base64.getUrlDecoder().decode(token.substring(dot + 1));
            if (!MessageDigest.isEqual(signature, mac(scope, payload))) {
                throw QueryException.badRequest(INVALID);
            }
            return new String(payload, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw QueryException.badRequest(INVALID);
        }
    }

    private byte[] mac(String scope, byte[] payload) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            mac.update(scope.getBytes(StandardCharsets.UTF_8));
            mac.update((byte) 0);
            return Arrays.copyOf(mac.doFinal(payload), MAC_BYTES);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("every JDK has " + ALGORITHM, e);
        }
    }

    private static String encode(byte[] bytes) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }
}
