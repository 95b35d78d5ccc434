package io.devhealth.schema;

import io.devhealth.schema.avro.HealthStatus;
import java.util.Optional;

/**
 * The word for a health wherever a person reads it: pod condition messages, the {@code DevicePostMortem}
 * record, transition messages and the query API. These are the words Kubernetes itself uses in a
 * container's {@code allocatedResourcesStatus} ({@code resource.health}: Healthy, Unhealthy, Unknown), so
 * that what devhealth says and what {@code kubectl} shows of the same device read alike. The enum's
 * symbols (HEALTHY, UNHEALTHY, UNKNOWN) are a wire contract of the Kafka topics and their mirrors, not
 * words for people.
 */
public final class HealthWords {

    private HealthWords() {}

    /** The word for {@code health}. */
    public static String of(HealthStatus health) {
        return switch (health) {
            case HEALTHY -> "Healthy";
            case UNHEALTHY -> "Unhealthy";
            case UNKNOWN -> "Unknown";
        };
    }

    /** The health {@code word} names, exactly as {@link #of} spells it; empty for anything else, null included. */
    public static Optional<HealthStatus> parse(String word) {
        for (HealthStatus health : HealthStatus.values()) {
            if (of(health).equals(word)) {
                return Optional.of(health);
            }
        }
        return Optional.empty();
    }
}
