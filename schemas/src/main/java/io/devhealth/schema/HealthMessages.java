package io.devhealth.schema;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** Rules for the human-readable health message that ends up in pod status. */
public final class HealthMessages {

    /** {@code v1.ResourceHealthMessageMaxLength}: the API's limit, in bytes as the kubelet counts them. */
    public static final int MAX_BYTES = 1024;

    private HealthMessages() {}

    /**
     * Cuts {@code message} to at most {@code maxBytes} UTF-8 bytes at a character boundary. The kubelet
     * cuts at a byte count and can split a character; we never do, so the result is always valid UTF-8.
     */
    public static String truncateUtf8(String message, int maxBytes) {
        if (message == null) {
            return null;
        }
        if (message.length() * 3L <= maxBytes || message.getBytes(StandardCharsets.UTF_8).length <= maxBytes) {
            return message;
        }
        CharsetEncoder encoder = StandardCharsets.UTF_8.newEncoder()
                .onMalformedInput(CodingErrorAction.REPLACE)
                .onUnmappableCharacter(CodingErrorAction.REPLACE);
        ByteBuffer out = ByteBuffer.allocate(maxBytes);
        CharBuffer in = CharBuffer.wrap(message);
        // The encoder stops before a character (or surrogate pair) that no longer fits.
        CoderResult result = encoder.encode(in, out, true);
        assert result.isOverflow() || result.isUnderflow();
        return message.substring(0, in.position());
    }
}
