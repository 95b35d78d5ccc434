package io.devhealth.processor;

import io.devhealth.processor.internals.rules.FlapLimits;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * When a source's changes of a device's health count as flapping, and how long a flapping device is
 * held: the setting for the source (by driver name, or {@code nvml}), else the default (more than 5
 * changes within 2 minutes; held until 5 minutes without a change).
 */
public record FlapPolicy(FlapLimits defaultLimits, Map<String, FlapLimits> perSource) {

    public static final FlapLimits DEFAULT = new FlapLimits(5, Duration.ofMinutes(2), Duration.ofMinutes(5));

    public FlapPolicy {
        Objects.requireNonNull(defaultLimits, "defaultLimits");
        perSource = Map.copyOf(perSource);
    }

    public static FlapPolicy defaults() {
        return new FlapPolicy(DEFAULT, Map.of());
    }

    /** No damping for any source. */
    public static FlapPolicy off() {
        return new FlapPolicy(FlapLimits.OFF, Map.of());
    }

    public FlapLimits limitsFor(String sourceName) {
        FlapLimits configured = perSource.get(sourceName);
        return configured != null ? configured : defaultLimits;
    }

    /**
     * Parses {@code source=flips/windowSeconds/quietSeconds} entries, e.g. {@code nvml=3/60/600}
     * ({@code source=0/1/1}: no damping for that source).
     *
     * @throws IllegalArgumentException naming the bad entry
     */
    public static Map<String, FlapLimits> parsePerSource(List<String> entries) {
        Map<String, FlapLimits> parsed = new LinkedHashMap<>();
        for (String entry : entries) {
            String trimmed = entry.trim();
            if (trimmed.isEmpty()) {
                continue;
            }
            int eq = trimmed.lastIndexOf('=');
            String[] parts = eq <= 0 ? new String[0] : trimmed.substring(eq + 1).split("/", -1);
            if (parts.length != 3) {
                throw new IllegalArgumentException("expected source=flips/windowSeconds/quietSeconds, got '" + trimmed + "'");
            }
            try {
                parsed.put(trimmed.substring(0, eq).trim(), new FlapLimits(Integer.parseInt(parts[0].trim()),
                        Duration.ofSeconds(Long.parseLong(parts[1].trim())), Duration.ofSeconds(Long.parseLong(parts[2].trim()))));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("expected source=flips/windowSeconds/quietSeconds with a threshold of at least 0 "
                        + "and positive seconds, got '" + trimmed + "'", e);
            }
        }
        return parsed;
    }
}
