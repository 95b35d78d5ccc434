package io.devhealth.schema.serde;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.avro.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A schema registry held in memory, for unit tests and the single-JVM embedded demo only: it is
 * lost when the JVM exits, so records written through it cannot be read by any other process.
 *
 * <p>It behaves like Apicurio's Confluent-compatible API where the serde can tell: ids are
 * content ids (the same schema gets the same id under every subject), registration is idempotent,
 * ids start at 1, unknown ids fail with 404 / 40403, and a subject's {@link CompatibilityLevel}
 * (default {@link CompatibilityLevel#NONE}, as Apicurio's) rejects incompatible schemas with 409.
 *
 * <p>"Same schema" means the same {@link Schema#toString()} rendering, not Avro's Parsing
 * Canonical Form: that form drops defaults and docs, and two schemas that differ in a default
 * resolve differently, so they must not share an id.
 *
 * <p>Thread-safe: every method is synchronized, which is plenty for tests and a demo.
 */
public final class InMemorySchemaRegistry implements SchemaRegistryClient {

    private static final Logger LOGGER = LoggerFactory.getLogger(InMemorySchemaRegistry.class);

    private final String name;
    private final Map<String, Integer> idsByContent = new HashMap<>();
    private final Map<Integer, Schema> schemasById = new HashMap<>();
    private final Map<String, List<Integer>> idsBySubject = new HashMap<>();
    private final Map<String, CompatibilityLevel> compatibilityBySubject = new HashMap<>();

    /** An anonymous registry, private to its creator. */
    public InMemorySchemaRegistry() {
        this("anonymous");
    }

    /** A registry whose name only appears in logs and {@link #toString()}. */
    public InMemorySchemaRegistry(String name) {
        this.name = Objects.requireNonNull(name, "name");
    }

    @Override
    public synchronized int register(String subject, Schema schema) {
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(schema, "schema");
        String content = schema.toString();
        List<Integer> versions = idsBySubject.computeIfAbsent(subject, s -> new ArrayList<>());
        Integer existing = idsByContent.get(content);
        if (existing != null && versions.contains(existing)) {
            return existing;
        }
        List<Schema> previous = versions.stream().map(schemasById::get).toList();
        List<String> problems = AvroCompatibility.violations(compatibility(subject), schema, previous);
        if (!problems.isEmpty()) {
            LOGGER.warn("Rejected incompatible schema registry={} subject={} problems={}", name, subject, problems);
            throw new SchemaRegistryException("Schema being registered is incompatible with an earlier schema for subject "
                    + subject + ": " + problems, 409, 409);
        }
        int id = existing != null ? existing : idsByContent.size() + 1;
        idsByContent.put(content, id);
        schemasById.put(id, schema);
        versions.add(id);
        LOGGER.debug("Registered schema registry={} subject={} id={} version={}", name, subject, id, versions.size());
        return id;
    }

    @Override
    public synchronized int lookupId(String subject, Schema schema) {
        List<Integer> versions = idsBySubject.get(subject);
        if (versions == null || versions.isEmpty()) {
            throw new SchemaRegistryException("Subject not found: " + subject, 404, SchemaRegistryException.SUBJECT_NOT_FOUND);
        }
        Integer id = idsByContent.get(schema.toString());
        if (id == null || !versions.contains(id)) {
            throw new SchemaRegistryException("Schema not found under subject " + subject, 404,
                    SchemaRegistryException.SCHEMA_NOT_FOUND);
        }
        return id;
    }

    @Override
    public synchronized Schema getById(int id) {
        Schema schema = schemasById.get(id);
        if (schema == null) {
            throw new SchemaRegistryException("Schema not found: id " + id, 404, SchemaRegistryException.SCHEMA_NOT_FOUND);
        }
        return schema;
    }

    @Override
    public synchronized boolean isCompatible(String subject, Schema schema) {
        List<Schema> previous = idsBySubject.getOrDefault(subject, List.of()).stream().map(schemasById::get).toList();
        return AvroCompatibility.violations(compatibility(subject), schema, previous).isEmpty();
    }

    @Override
    public synchronized void setCompatibility(String subject, CompatibilityLevel level) {
        compatibilityBySubject.put(Objects.requireNonNull(subject, "subject"), Objects.requireNonNull(level, "level"));
    }

    /** The subjects registered so far, for tests and the demo's diagnostics. */
    public synchronized List<String> subjects() {
        return idsBySubject.entrySet().stream().filter(e -> !e.getValue().isEmpty()).map(Map.Entry::getKey)
                .sorted().toList();
    }

    private CompatibilityLevel compatibility(String subject) {
        return compatibilityBySubject.getOrDefault(subject, CompatibilityLevel.NONE);
    }

    @Override
    public String toString() {
        return "InMemorySchemaRegistry[" + name + "]";
    }
}
