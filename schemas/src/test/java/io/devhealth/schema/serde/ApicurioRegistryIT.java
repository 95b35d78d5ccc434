package io.devhealth.schema.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.TextNode;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.NodeEvent;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The serde and {@link ConfluentCompatSchemaRegistryClient} against a real Apicurio Registry 3.3.3
 * ({@code /apis/ccompat/v7}), the registry devhealth runs beside the build and in the demo.
 *
 * <p>maven-dependency-plugin unpacks the server into {@code target/apicurio} in
 * {@code pre-integration-test}; this class starts it with a JDK >= 21 from this machine, all on
 * 127.0.0.1, and stops it afterwards. Server output: {@code target/apicurio-it.log}.
 *
 * <p>Without a JDK >= 21 the class fails, so that a green build cannot hide a skipped check; set
 * {@code -Ddevhealth.it.apicurio.skip=true} to skip it on purpose.
 */
class ApicurioRegistryIT {

    private static final Logger LOGGER = LoggerFactory.getLogger(ApicurioRegistryIT.class);

    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(
            Long.getLong("devhealth.it.apicurio.startup.timeout.s", 120));

    private static ApicurioServer server;

    @BeforeAll
    static void startRegistry() throws Exception {
        Path java = ApicurioServer.javaOrSkip();
        Path home = Paths.get(System.getProperty("devhealth.it.apicurio.home", "target/apicurio"));
        server = ApicurioServer.start(java, home, Paths.get("target", "apicurio-it.log").toAbsolutePath(),
                STARTUP_TIMEOUT);
        String line = "Apicurio Registry startup took " + server.startupTime().toMillis() + " ms (" + java + ")";
        System.out.println(line);
        LOGGER.info("Apicurio Registry started startupMs={} url={}", server.startupTime().toMillis(), server.ccompatUrl());
    }

    @AfterAll
    static void stopRegistry() {
        if (server != null) {
            server.close();
        }
    }

    /** A client with empty caches, so that every assertion below reflects what the server said. */
    private static ConfluentCompatSchemaRegistryClient freshClient() {
        return ConfluentCompatSchemaRegistryClient.of(server.ccompatUrl());
    }

    @Test
    void shouldRoundTripEveryRecordTypeThroughTheRealRegistry() {
        for (SpecificRecord sample : SampleRecords.allTopLevel()) {
            String topic = "it.roundtrip." + sample.getSchema().getName();
            AvroSerde<SpecificRecord> producer = serde(sample, freshClient());
            AvroSerde<SpecificRecord> consumer = serde(sample, freshClient());

            byte[] bytes = producer.serializer().serialize(topic, sample);

            int id = freshClient().lookupId(topic + "-value", sample.getSchema());
            assertThat(bytes[0]).isZero();
            assertThat(ByteBuffer.wrap(bytes, 1, 4).getInt()).isEqualTo(id);
            assertThat(consumer.deserializer().deserialize(topic, bytes)).as(topic).isEqualTo(sample);
        }
    }

    @Test
    void shouldReturnTheSameIdWhenTheSameSchemaIsRegisteredAgain() {
        Schema schema = DeviceHealthReport.getClassSchema();

        int first = freshClient().register("it.idempotent-value", schema);
        int again = freshClient().register("it.idempotent-value", schema);
        int otherSubject = freshClient().register("it.idempotent-other-value", schema);

        assertThat(again).isEqualTo(first);
        assertThat(otherSubject).as("Apicurio ccompat ids are content ids").isEqualTo(first);
        assertThat(freshClient().getById(first)).isEqualTo(schema);
    }

    @Test
    void shouldRejectAnIncompatibleSchemaOnceTheSubjectIsBackward() {
        String subject = "it.compat-value";
        Schema v1 = DeviceHealthReport.getClassSchema();
        Schema breaking = SchemaEdits.edit(v1, SchemaEdits.addField("rack", "string", null));
        Schema compatible = SchemaEdits.edit(v1, SchemaEdits.addField("rack", "string",
                TextNode.valueOf("")));
        ConfluentCompatSchemaRegistryClient client = freshClient();
        int v1Id = client.register(subject, v1);

        client.setCompatibility(subject, CompatibilityLevel.BACKWARD);

        assertThat(client.isCompatible(subject, breaking)).isFalse();
        assertThat(client.isCompatible(subject, compatible)).isTrue();
        assertThatThrownBy(() -> client.register(subject, breaking))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                    assertThat(e.httpStatus()).isEqualTo(409);
                    assertThat(e.isIncompatible()).isTrue();
                    assertThat(e.isRetriable()).isFalse();
                });
        assertThat(client.register(subject, compatible)).isNotEqualTo(v1Id);
    }

    @Test
    void shouldReportAnUnknownIdAsNotFoundAndTheSerdeAsSerializationException() {
        assertThatThrownBy(() -> freshClient().getById(987_654))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                    assertThat(e.httpStatus()).isEqualTo(404);
                    assertThat(e.errorCode()).isEqualTo(SchemaRegistryException.SCHEMA_NOT_FOUND);
                });
        AvroSerde<NodeEvent> serde = AvroSerde.of(NodeEvent.class, freshClient());

        assertThatThrownBy(() -> serde.deserializer().deserialize("it.unknown", SchemaEdits.frame(987_654, new byte[] {0})))
                .isInstanceOf(SerializationException.class).hasMessageContaining("Unknown schema id 987654");
    }

    @Test
    void shouldWorkWhenKafkaConfiguresTheSerdeFromProperties() {
        AvroSerde<NodeEvent> serde = new AvroSerde<>();
        serde.configure(Map.of(AvroSerde.SCHEMA_REGISTRY_URL_CONFIG, server.ccompatUrl(),
                AvroSerde.AVRO_CLASS_CONFIG, NodeEvent.class.getName()), false);

        byte[] bytes = serde.serializer().serialize("it.configured", SampleRecords.eventWithHeartbeat());

        assertThat(AvroSerde.of(NodeEvent.class, freshClient()).deserializer().deserialize("it.configured", bytes))
                .isEqualTo(SampleRecords.eventWithHeartbeat());
    }

    @SuppressWarnings("unchecked")
    private static AvroSerde<SpecificRecord> serde(SpecificRecord sample, SchemaRegistryClient client) {
        return AvroSerde.of((Class<SpecificRecord>) sample.getClass(), client);
    }
}
