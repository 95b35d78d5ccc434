package io.devhealth.schema.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.TextNode;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.NodeHeartbeat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.avro.Schema;
import org.junit.jupiter.api.Test;

class InMemorySchemaRegistryTest {

    private final InMemorySchemaRegistry registry = new InMemorySchemaRegistry("test");

    @Test
    void shouldReturnTheSameIdForTheSameSchemaAcrossSubjects() {
        int first = registry.register("a-value", DeviceHealthReport.getClassSchema());
        int again = registry.register("a-value", DeviceHealthReport.getClassSchema());
        int otherSubject = registry.register("b-value", new Schema.Parser().parse(DeviceHealthReport.getClassSchema().toString()));
        int otherSchema = registry.register("a-value", NodeHeartbeat.getClassSchema());

        assertThat(first).isEqualTo(1).isEqualTo(again).isEqualTo(otherSubject);
        assertThat(otherSchema).isEqualTo(2);
        assertThat(registry.getById(2)).isEqualTo(NodeHeartbeat.getClassSchema());
    }

    @Test
    void shouldGiveDifferentIdsToSchemasThatDifferOnlyInADefault() {
        Schema a = SchemaEdits.edit(DeviceHealthReport.getClassSchema(), SchemaEdits.addField("x", "string", TextNode.valueOf("a")));
        Schema b = SchemaEdits.edit(DeviceHealthReport.getClassSchema(), SchemaEdits.addField("x", "string", TextNode.valueOf("b")));

        assertThat(registry.register("s", a)).isNotEqualTo(registry.register("s", b));
    }

    @Test
    void shouldFailWith40403ForAnUnknownId() {
        assertThatThrownBy(() -> registry.getById(99))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                    assertThat(e.httpStatus()).isEqualTo(404);
                    assertThat(e.errorCode()).isEqualTo(SchemaRegistryException.SCHEMA_NOT_FOUND);
                });
    }

    @Test
    void shouldRejectAnIncompatibleSchemaOnceTheSubjectIsBackward() {
        Schema v1 = DeviceHealthReport.getClassSchema();
        Schema breaking = SchemaEdits.edit(v1, SchemaEdits.addField("rack", "string", null));
        registry.register("s", v1);
        assertThat(registry.isCompatible("s", breaking)).as("NONE accepts anything").isTrue();

        registry.setCompatibility("s", CompatibilityLevel.BACKWARD);

        assertThat(registry.isCompatible("s", breaking)).isFalse();
        assertThatThrownBy(() -> registry.register("s", breaking))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> assertThat(e.isIncompatible()).isTrue())
                .hasMessageContaining("rack");
        assertThat(registry.register("s", v1)).as("re-registering an existing version is still fine").isEqualTo(1);
        assertThat(registry.register("other", breaking)).as("other subjects keep NONE").isEqualTo(2);
    }

    @Test
    void shouldCheckForwardAndTransitiveLevels() {
        Schema v1 = DeviceHealthReport.getClassSchema();
        Schema v2 = SchemaEdits.edit(v1, SchemaEdits.removeFields("sequence"));
        Schema v3 = SchemaEdits.edit(v2, SchemaEdits.addField("sequence", "string", TextNode.valueOf("")));

        assertThat(AvroCompatibility.violations(CompatibilityLevel.BACKWARD, v3, List.of(v1, v2))).isEmpty();
        assertThat(AvroCompatibility.violations(CompatibilityLevel.BACKWARD_TRANSITIVE, v3, List.of(v1, v2)))
                .singleElement().asString().startsWith("BACKWARD").contains("TYPE_MISMATCH");
        assertThat(AvroCompatibility.violations(CompatibilityLevel.FORWARD, v2, List.of(v1))).isEmpty();
        assertThat(AvroCompatibility.violations(CompatibilityLevel.FORWARD,
                SchemaEdits.edit(v1, SchemaEdits.removeFields("node")), List.of(v1)))
                .singleElement().asString().startsWith("FORWARD");
    }

    @Test
    void shouldHandOutUniqueIdsUnderConcurrentRegistration() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Integer>> ids = IntStream.range(0, 200)
                    .mapToObj(i -> pool.submit(() -> registry.register("c" + (i % 7),
                            Schema.createFixed("F" + (i % 50), null, "x", 1))))
                    .toList();
            Set<Integer> distinct = ConcurrentHashMap.newKeySet();
            for (Future<Integer> id : ids) {
                distinct.add(id.get(10, TimeUnit.SECONDS));
            }
            assertThat(distinct).hasSize(50);
        } finally {
            pool.shutdownNow();
        }
    }
}
