package io.devhealth.faults;

import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.avro.FleetStats;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.serde.InMemorySchemaRegistry;
import io.devhealth.schema.serde.SchemaRegistries;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.avro.Schema;

/**
 * Gives two JVMs the same schema ids without a registry server: {@code mem://} registries assign
 * content ids in registration order (1, 2, …, the same id for the same schema under any subject), so
 * registering every topic schema in one fixed order first makes the test JVM's ids and the killed
 * processor's ids identical. Each JVM calls {@link #registerAll} before its first serde touches the
 * registry.
 */
final class SharedSchemaIds {

    private SharedSchemaIds() {}

    /** Registers every topic value schema of the pipeline, in a fixed order; returns the ids by subject. */
    static Map<String, Integer> registerAll(String registryName, Topics topics) {
        InMemorySchemaRegistry registry = SchemaRegistries.inMemory(registryName);
        Map<String, Schema> ordered = new LinkedHashMap<>();
        ordered.put(topics.nodeEvents() + "-value", NodeEvent.getClassSchema());
        // What the processor's node-allocations store writes to its changelog (a content id: any subject will do).
        ordered.put(topics.prefix() + "node-allocations-value", NodeAllocations.getClassSchema());
        ordered.put(topics.podDeviceStatus() + "-value", PodDeviceStatus.getClassSchema());
        ordered.put(topics.healthTransitions() + "-value", HealthTransition.getClassSchema());
        ordered.put(topics.deadLetters() + "-value", DeadLetter.getClassSchema());
        ordered.put(topics.fleetStats() + "-value", FleetStats.getClassSchema());
        Map<String, Integer> ids = new LinkedHashMap<>();
        ordered.forEach((subject, schema) -> ids.put(subject, registry.register(subject, schema)));
        return ids;
    }
}
