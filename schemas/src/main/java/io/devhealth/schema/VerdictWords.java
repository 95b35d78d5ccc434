package io.devhealth.schema;

import io.devhealth.schema.avro.Verdict;
import java.util.Optional;

/**
 * The word for a pod's verdict wherever a person reads it: the {@code DevicePostMortem} record
 * ({@code spec.verdict}, a printer column), {@code devhealth query pod} and the fleet summary. The enum's
 * symbols (DEVICE_FAILURE, …) are the wire contract of pod-verdicts, not words for people.
 */
public final class VerdictWords {

    private VerdictWords() {}

    /** The word for {@code verdict}. */
    public static String of(Verdict verdict) {
        return switch (verdict) {
            case DEVICE_FAILURE -> "DeviceFailure";
            case NO_DEVICE_FAILURE -> "NoDeviceFailure";
            case UNKNOWN -> "Unknown";
        };
    }

    /** The verdict {@code word} names, exactly as {@link #of} spells it; empty for anything else, null included. */
    public static Optional<Verdict> parse(String word) {
        for (Verdict verdict : Verdict.values()) {
            if (of(verdict).equals(word)) {
                return Optional.of(verdict);
            }
        }
        return Optional.empty();
    }
}
