package io.devhealth.schema.serde;

/**
 * A subject's compatibility rule, with the names the Confluent REST API uses on the wire.
 *
 * <p>BACKWARD: the new schema can read data written with the previous one (upgrade consumers first).
 * FORWARD: data written with the new schema can be read with the previous one (upgrade producers
 * first). FULL: both. The {@code _TRANSITIVE} forms check every earlier version, not only the latest.
 */
public enum CompatibilityLevel {
    NONE,
    BACKWARD,
    BACKWARD_TRANSITIVE,
    FORWARD,
    FORWARD_TRANSITIVE,
    FULL,
    FULL_TRANSITIVE;

    /** Whether the new schema, as a reader, must be able to read data written with earlier ones. */
    boolean checksBackward() {
        return this == BACKWARD || this == BACKWARD_TRANSITIVE || this == FULL || this == FULL_TRANSITIVE;
    }

    /** Whether older readers must be able to read data written with the new schema. */
    boolean checksForward() {
        return this == FORWARD || this == FORWARD_TRANSITIVE || this == FULL || this == FULL_TRANSITIVE;
    }

    /** Whether every earlier version is checked rather than only the latest. */
    boolean isTransitive() {
        return name().endsWith("_TRANSITIVE");
    }
}
