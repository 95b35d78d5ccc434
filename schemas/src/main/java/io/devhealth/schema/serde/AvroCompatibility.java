package io.devhealth.schema.serde;

import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaCompatibility.SchemaCompatibilityType;
import org.apache.avro.SchemaCompatibility.SchemaPairCompatibility;

/**
 * Applies a {@link CompatibilityLevel} to Avro schemas with Avro's own reader/writer resolution
 * rules ({@link SchemaCompatibility}), the same rules the deserializer uses at run time.
 *
 * <p>Used by {@link InMemorySchemaRegistry} so that tests and the embedded demo reject the same
 * schema changes a real registry would, and usable by build-time checks of schema evolution.
 */
public final class AvroCompatibility {

    private AvroCompatibility() {
    }

    /**
     * Checks {@code candidate} against {@code existing} (oldest first) under {@code level}.
     *
     * @return one message per violated reader/writer pair; empty when compatible
     */
    public static List<String> violations(CompatibilityLevel level, Schema candidate, List<Schema> existing) {
        List<String> problems = new ArrayList<>();
        if (level == CompatibilityLevel.NONE || existing.isEmpty()) {
            return problems;
        }
        List<Schema> against = level.isTransitive() ? existing : List.of(existing.get(existing.size() - 1));
        for (Schema previous : against) {
            if (level.checksBackward()) {
                describe(problems, "BACKWARD", SchemaCompatibility.checkReaderWriterCompatibility(candidate, previous));
            }
            if (level.checksForward()) {
                describe(problems, "FORWARD", SchemaCompatibility.checkReaderWriterCompatibility(previous, candidate));
            }
        }
        return problems;
    }

    /** Whether {@code reader} can decode everything written with {@code writer}. */
    public static boolean canRead(Schema reader, Schema writer) {
        return SchemaCompatibility.checkReaderWriterCompatibility(reader, writer).getType()
                == SchemaCompatibilityType.COMPATIBLE;
    }

    private static void describe(List<String> problems, String direction, SchemaPairCompatibility result) {
        if (result.getType() != SchemaCompatibilityType.COMPATIBLE) {
            result.getResult().getIncompatibilities().forEach(incompatibility -> problems.add(direction + ": "
                    + incompatibility.getType() + " at " + incompatibility.getLocation() + ": "
                    + incompatibility.getMessage()));
        }
    }
}
