package io.devhealth.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.processor.PipelineSchemas;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.InMemorySchemaRegistry;
import io.devhealth.schema.serde.SchemaRegistries;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class SchemasCommandTest {

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        CommandLine cli = Devhealth.commandLine();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return cli.execute(args);
    }

    @Test
    void shouldRegisterEverySubjectSoThatLookupOnlySerializersWrite() {
        String name = "schemas-" + UUID.randomUUID();
        InMemorySchemaRegistry registry = SchemaRegistries.inMemory(name);
        Topics topics = new Topics("acme.");
        var lookupOnly = AvroSerde.of(DeadLetter.class, registry, false, false).serializer();
        DeadLetter letter = DeadLetter.newBuilder().setStage("sink").setReason("r")
                .setFailedAt(java.time.Instant.EPOCH).build();
        assertThatThrownBy(() -> lookupOnly.serialize(topics.deadLetters(), letter))
                .as("before registration, a serializer that does not register fails").isInstanceOf(RuntimeException.class);

        // The services' bootstrap setting is required by the shared options, though registration does not use Kafka.
        assertThat(run("schemas", "register", "--set", "schema.registry.url=mem://" + name, "--set", "topic.prefix=acme.",
                "--set", "application.id=acme-processor", "--set", "kafka.bootstrap.servers=unused:9092")).as(err.toString()).isZero();

        assertThat(registry.subjects()).containsExactlyInAnyOrderElementsOf(PipelineSchemas.subjects(topics, "acme-processor").keySet());
        assertThat(registry.subjects()).contains("acme.node-events-value", "acme.pod-device-status-value", "acme.dlq-value",
                "acme-processor-node-allocations-changelog-value");
        assertThat(out.toString().lines()).hasSize(registry.subjects().size());
        assertThat(lookupOnly.serialize(topics.deadLetters(), letter)).isNotEmpty();
    }

    @Test
    void shouldSayWhatIsMissingWithoutARegistry() {
        assertThat(run("schemas", "register", "--set", "kafka.bootstrap.servers=unused:9092")).isEqualTo(2);

        assertThat(err.toString()).contains("schema.registry.url");
    }
}
