package io.devhealth.query.access;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bearer tokens that may query, kept only as SHA-256 digests, compared in constant time.
 *
 * <p>Tokens come from a file (one per line, blank lines and '#' comments skipped) and/or one fixed
 * token. The file is re-read when its content changes, checked at most once per reload interval
 * on the request path: a mounted Kubernetes Secret is updated by swapping a symlink, so the digest of
 * the content (not a file watch or mtime) is what tells a rotation. When the file cannot be read the
 * last good tokens stay in force (a Secret update is not atomic for readers on every volume type);
 * a file that never could be read admits nothing.
 */
public final class BearerTokens {

    private static final Logger LOGGER = LoggerFactory.getLogger(BearerTokens.class);
    /** A token file is small; anything larger is a mistake, not tokens. */
    static final int MAX_FILE_BYTES = 1 << 20;
    /** Longer presented tokens are rejected before hashing (bounds the work an unauthenticated caller causes). */
    static final int MAX_TOKEN_LENGTH = 4096;

    private final Path file;
    private final byte[] fixedDigest;
    private final Duration reloadInterval;
    private final Clock clock;
    private volatile List<byte[]> fileDigests = List.of();
    private volatile byte[] fileContentDigest;
    private volatile Instant nextCheck = Instant.MIN;

    public BearerTokens(Path file, String fixedToken, Duration reloadInterval, Clock clock) {
        this.file = file;
        this.fixedDigest = fixedToken == null || fixedToken.isBlank() ? null : sha256(fixedToken.strip());
        this.reloadInterval = reloadInterval;
        this.clock = clock;
        if (file != null) {
            reload();
        }
    }

    /** Whether {@code presented} is one of the tokens; every known digest is compared, so timing tells nothing. */
    boolean matches(String presented) {
        if (presented == null || presented.isEmpty() || presented.length() > MAX_TOKEN_LENGTH) {
            return false;
        }
        reloadIfDue();
        byte[] digest = sha256(presented);
        boolean match = false;
        if (fixedDigest != null) {
            match |= MessageDigest.isEqual(fixedDigest, digest);
        }
        for (byte[] known : fileDigests) {
            match |= MessageDigest.isEqual(known, digest);
        }
        return match;
    }

    /** How many tokens are in force now (for logs and tests; never the tokens themselves). */
    int count() {
        return fileDigests.size() + (fixedDigest == null ? 0 : 1);
    }

    private void reloadIfDue() {
        if (file == null) {
            return;
        }
        Instant now = clock.instant();
        if (now.isBefore(nextCheck)) {
            return;
        }
        synchronized (this) {
            if (now.isBefore(nextCheck)) {
                return;
            }
            reload();
        }
    }

    private synchronized void reload() {
        nextCheck = clock.instant().plus(reloadInterval);
        byte[] content;
        try (InputStream in = Files.newInputStream(file)) {
            content = in.readNBytes(MAX_FILE_BYTES + 1);
        } catch (IOException e) {
            LOGGER.warn("cannot read the query token file, keeping the tokens in force file={} tokens={} error=\"{}\"", file,
                    count(), e.getClass().getSimpleName());
            return;
        }
        if (content.length > MAX_FILE_BYTES) {
            LOGGER.warn("query token file too large, keeping the tokens in force file={} maxBytes={}", file, MAX_FILE_BYTES);
            return;
        }
        byte[] contentDigest = sha256(content);
        if (fileContentDigest != null && MessageDigest.isEqual(contentDigest, fileContentDigest)) {
            return;
        }
        List<byte[]> digests = new ArrayList<>();
        for (String line : new String(content, StandardCharsets.UTF_8).split("\n")) {
            String token = line.strip();
            if (!token.isEmpty() && !token.startsWith("#")) {
                digests.add(sha256(token));
            }
        }
        Arrays.fill(content, (byte) 0);
        boolean first = fileContentDigest == null;
        fileDigests = List.copyOf(digests);
        fileContentDigest = contentDigest;
        LOGGER.info("query tokens {} file={} tokens={}", first ? "loaded" : "reloaded", file, digests.size());
    }

    /** The digest tokens are known by here and in {@link CachedReviews}. */
    static byte[] sha256(String value) {
        return sha256(value.getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] sha256(byte[] value) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(value);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
