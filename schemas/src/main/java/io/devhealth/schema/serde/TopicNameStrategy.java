package io.devhealth.schema.serde;

import java.util.Objects;

/**
 * Confluent's default subject naming: {@code <topic>-value} for record values and
 * {@code <topic>-key} for keys.
 *
 * <p>Why this strategy: one schema lineage per topic, which is what devhealth's topics are (each
 * carries exactly one record type), and the one every registry and tool assumes by default; the
 * Apicurio serde's TopicIdStrategy produces the same names.
 */
public final class TopicNameStrategy {

    private TopicNameStrategy() {
    }

    /** The subject for the key or value schema of {@code topic}. */
    public static String subjectName(String topic, boolean isKey) {
        Objects.requireNonNull(topic, "topic");
        return topic + (isKey ? "-key" : "-value");
    }
}
