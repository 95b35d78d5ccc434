package io.devhealth.simulators;

import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

/**
 * Unique names for resources that tests share a server for: Kafka topics, consumer groups,
 * {@code application.id}s, transactional ids, Kubernetes namespaces and pod names.
 *
 * <p>A name is {@code <prefix>-<counter><random>}, lower case, using only {@code [a-z0-9-]}, so it is a
 * legal Kafka topic name and (for a prefix that is one) a legal DNS-1123 label. It is unique within a
 * JVM (counter) and very likely across JVMs sharing a server (random part).
 */
public final class UniqueNames {

    /** Longest prefix accepted; leaves room for the suffix within a 63-character DNS label. */
    public static final int MAX_PREFIX_LENGTH = 48;

    private static final Pattern PREFIX = Pattern.compile("[a-z0-9]([a-z0-9.-]*[a-z0-9])?");
    private static final AtomicLong COUNTER = new AtomicLong();

    private UniqueNames() {
    }

    /**
     * @param prefix what the name is for, e.g. {@code "device-health"}; lower case letters, digits, '-' and '.'
     * @return e.g. {@code device-health-3k9x2q}
     * @throws IllegalArgumentException if the prefix is empty, too long or has other characters
     */
    public static String uniqueName(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        if (prefix.length() > MAX_PREFIX_LENGTH || !PREFIX.matcher(prefix).matches()) {
            throw new IllegalArgumentException("prefix must match " + PREFIX.pattern() + " and be at most "
                    + MAX_PREFIX_LENGTH + " characters: '" + prefix + "'");
        }
        String counter = Long.toString(COUNTER.incrementAndGet(), 36);
        // Fixed width, so that counter + random can never be read two ways.
        int r = ThreadLocalRandom.current().nextInt(36 * 36 * 36 * 36);
        String random = String.format(Locale.ROOT, "%4s", Integer.toString(r, 36)).replace(' ', '0');
        return (prefix + "-" + counter + random).toLowerCase(Locale.ROOT);
    }
}
