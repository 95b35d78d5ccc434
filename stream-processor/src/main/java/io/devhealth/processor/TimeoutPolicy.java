package io.devhealth.processor;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * How long a source's report stays fresh: the device's own {@code health_check_timeout_seconds}
 * when the source sent one, else the setting for the source (by driver name, or {@code nvml}),
 * else the default (30 s).
 */
public record TimeoutPolicy(Duration defaultTimeout, Map<String, Duration> perSource) {

    public static final Duration DEFAULT = Duration.ofSeconds(30);

    public TimeoutPolicy {
        Objects.requireNonNull(defaultTimeout, "defaultTimeout");
        if (defaultTimeout.isNegative() || defaultTimeout.isZero()) {
            throw new IllegalArgumentException("default timeout must be positive: " + defaultTimeout);
        }
        perSource = Map.copyOf(perSource);
    }

    public static TimeoutPolicy defaults() {
        return new TimeoutPolicy(DEFAULT, Map.of());
    }

    /**
     * Parses {@code driver=seconds} entries, e.g. {@code gpu.nvidia.com=60}.
     *
     * @throws IllegalArgumentException naming the bad entry
     */
    public static Map<String, Duration> parsePerSource(List<String> entries) {
        Map<String, Duration> parsed = new LinkedHashMap<>();
        for (String entry : entries) {
            String trimmed = entry.trim();
            if (trimmed.isEmpty()) {
                continue;
            }
            int eq = trimmed.lastIndexOf('=');
            if (eq <= 0 || eq == trimmed.length() - 1) {
                throw new IllegalArgumentException("expected driver=seconds, got '" + trimmed + "'");
            }
            long seconds;
            try {
                seconds = Long.parseLong(trimmed.substring(eq + 1).trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("expected driver=seconds, got '" + trimmed + "'", e);
            }
            if (seconds <= 0) {
                throw new IllegalArgumentException("timeout must be positive in '" + trimmed + "'");
            }
            parsed.put(trimmed.substring(0, eq).trim(), Duration.ofSeconds(seconds));
        }
        return parsed;
    }

    /** The timeout in milliseconds of a report from {@code sourceName} carrying {@code deviceTimeoutSeconds}. */
    public long timeoutMs(String sourceName, Long deviceTimeoutSeconds) {
        if (deviceTimeoutSeconds != null && deviceTimeoutSeconds > 0) {
            return Duration.ofSeconds(deviceTimeoutSeconds).toMillis();
        }
        Duration configured = perSource.get(sourceName);
        return (configured != null ? configured : defaultTimeout).toMillis();
    }
}
