package io.devhealth.schema.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.LongNode;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.avro.HealthStatus;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class AvroSerdeTest {

    private static final String TOPIC = "devhealth.node-events";

    private final InMemorySchemaRegistry registry = new InMemorySchemaRegistry("serde-test");

    static Stream<SpecificRecord> samples() {
        return SampleRecords.allTopLevel().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("samples")
    void shouldRoundTripEveryTopLevelRecordType(SpecificRecord sample) {
        AvroSerde<SpecificRecord> serde = serdeFor(sample);

        byte[] bytes = serde.serializer().serialize("t." + sample.getSchema().getName(), sample);
        SpecificRecord back = serde.deserializer().deserialize("t." + sample.getSchema().getName(), bytes);

        assertThat(back).isEqualTo(sample).isNotSameAs(sample);
    }

    @Test
    void shouldStartWithMagicByteAndBigEndianSchemaIdFromTheRegistry() {
        // Push the next id past one byte, so that byte order shows: 301 = 0x0000012D.
        for (int i = 0; i < 300; i++) {
            registry.register("filler-value", Schema.createFixed("F" + i, null, "x", 1));
        }
        AvroSerde<NodeEvent> serde = AvroSerde.of(NodeEvent.class, registry);

        byte[] bytes = serde.serializer().serialize(TOPIC, SampleRecords.eventWithReport());

        int id = registry.lookupId(TOPIC + "-value", NodeEvent.getClassSchema());
        assertThat(id).isEqualTo(301);
        assertThat(Arrays.copyOf(bytes, 5)).containsExactly(0x00, 0x00, 0x00, 0x01, 0x2D);
    }

    @Test
    void shouldRegisterUnderTopicValueSubjectAndTopicKeySubject() {
        AvroSerde.of(NodeEvent.class, registry).serializer().serialize(TOPIC, SampleRecords.eventWithReport());
        AvroSerde.of(DeviceHealthReport.class, registry, true).serializer().serialize("keys", SampleRecords.deviceHealthReport());

        assertThat(registry.subjects()).containsExactly("devhealth.node-events-value", "keys-key");
    }

    @Test
    void shouldRegisterOncePerTopicAndFetchOncePerSchemaId() {
        CountingRegistry counting = new CountingRegistry(registry);
        AvroSerde<NodeEvent> serde = AvroSerde.of(NodeEvent.class, counting);

        for (int i = 0; i < 5; i++) {
            byte[] bytes = serde.serializer().serialize(TOPIC, SampleRecords.eventWithHeartbeat());
            serde.deserializer().deserialize(TOPIC, bytes);
        }
        serde.serializer().serialize("other-topic", SampleRecords.eventWithHeartbeat());

        assertThat(counting.registers).hasValue(2);
        assertThat(counting.fetches).hasValue(1);
    }

    @Test
    void shouldLookUpInsteadOfRegisterWhenAutoRegisterIsOff() {
        AvroSerializer<NodeEvent> serializer = new AvroSerializer<>(NodeEvent.class, registry, false);
        serializer.configure(Map.of(AvroSerializer.AUTO_REGISTER_SCHEMAS_CONFIG, "false"), false);

        assertThatThrownBy(() -> serializer.serialize(TOPIC, SampleRecords.eventWithReport()))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> assertThat(e.isNotFound()).isTrue());

        int id = registry.register(TOPIC + "-value", NodeEvent.getClassSchema());
        assertThat(ByteBuffer.wrap(serializer.serialize(TOPIC, SampleRecords.eventWithReport()), 1, 4).getInt())
                .isEqualTo(id);
    }

    @Test
    void shouldRejectWrongMagicByte() {
        AvroSerde<NodeEvent> serde = AvroSerde.of(NodeEvent.class, registry);
        byte[] bytes = serde.serializer().serialize(TOPIC, SampleRecords.eventWithReport());
        bytes[0] = 0x01;

        assertThatThrownBy(() -> serde.deserializer().deserialize(TOPIC, bytes))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("0x01").hasMessageContaining("magic byte").hasMessageContaining(TOPIC);
    }

    @Test
    void shouldRejectPayloadShorterThanTheHeader() {
        AvroSerde<NodeEvent> serde = AvroSerde.of(NodeEvent.class, registry);

        assertThatThrownBy(() -> serde.deserializer().deserialize(TOPIC, new byte[] {0x00, 0x00, 0x01}))
                .isInstanceOf(SerializationException.class).hasMessageContaining("3 bytes");
    }

    @Test
    void shouldRejectUnknownSchemaId() {
        AvroSerde<NodeEvent> serde = AvroSerde.of(NodeEvent.class, registry);

        assertThatThrownBy(() -> serde.deserializer().deserialize(TOPIC, SchemaEdits.frame(4711, new byte[] {0x00})))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("Unknown schema id 4711")
                .hasCauseInstanceOf(SchemaRegistryException.class);
    }

    @Test
    void shouldRejectTruncatedBody() {
        AvroSerde<NodeEvent> serde = AvroSerde.of(NodeEvent.class, registry);
        byte[] bytes = serde.serializer().serialize(TOPIC, SampleRecords.eventWithReport());

        assertThatThrownBy(() -> serde.deserializer().deserialize(TOPIC, Arrays.copyOf(bytes, bytes.length - 10)))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("Cannot decode").hasMessageContaining("schema id 1");
    }

    @Test
    void shouldRejectBodyWithTrailingBytes() {
        AvroSerde<NodeEvent> serde = AvroSerde.of(NodeEvent.class, registry);
        byte[] bytes = serde.serializer().serialize(TOPIC, SampleRecords.eventWithReport());

        assertThatThrownBy(() -> serde.deserializer().deserialize(TOPIC, Arrays.copyOf(bytes, bytes.length + 2)))
                .isInstanceOf(SerializationException.class).hasMessageContaining("bytes left");
    }

    @Test
    void shouldRejectWriterSchemaOfAnotherRecordType() {
        AvroSerde<DeviceHealthReport> reports = AvroSerde.of(DeviceHealthReport.class, registry);
        byte[] heartbeatBytes = AvroSerde.of(io.devhealth.schema.avro.NodeHeartbeat.class, registry).serializer()
                .serialize(TOPIC, SampleRecords.nodeHeartbeat());

        assertThatThrownBy(() -> reports.deserializer().deserialize(TOPIC, heartbeatBytes))
                .isInstanceOf(SerializationException.class).hasMessageContaining("DeviceHealthReport");
    }

    @Test
    void shouldMapNullToNullBothWays() {
        AvroSerde<NodeEvent> serde = AvroSerde.of(NodeEvent.class, registry);

        assertThat(serde.serializer().serialize(TOPIC, null)).isNull();
        assertThat(serde.deserializer().deserialize(TOPIC, null)).isNull();
        assertThat(registry.subjects()).isEmpty();
    }

    @Test
    void shouldDecodeDataFromAnOlderWriterWithoutFieldsAddedSince() {
        Schema current = DeviceHealthReport.getClassSchema();
        Schema older = SchemaEdits.edit(current, SchemaEdits.removeFields("timeoutSeconds", "collectorEpoch", "sequence"));
        int olderId = registry.register("old-value", older);
        byte[] currentBody = SchemaEdits.body(AvroSerde.of(DeviceHealthReport.class, registry).serializer()
                .serialize("scratch", SampleRecords.deviceHealthReport()));
        byte[] olderBody = SchemaEdits.encode(SchemaEdits.project(currentBody, current, older), older);

        DeviceHealthReport back = AvroSerde.of(DeviceHealthReport.class, registry).deserializer()
                .deserialize("old", SchemaEdits.frame(olderId, olderBody));

        assertThat(back.getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(back.getObservedAt()).isEqualTo(SampleRecords.T0);
        assertThat(back.getTimeoutSeconds()).isNull();
        assertThat(back.getCollectorEpoch()).isZero();
        assertThat(back.getSequence()).isZero();
    }

    @Test
    void shouldSkipFieldsAddedByANewerWriter() {
        Schema current = DeviceHealthReport.getClassSchema();
        Schema newer = SchemaEdits.edit(current, SchemaEdits.addField("gpuTemperatureC", "long", LongNode.valueOf(0)));
        int newerId = registry.register("new-value", newer);
        byte[] currentBody = SchemaEdits.body(AvroSerde.of(DeviceHealthReport.class, registry).serializer()
                .serialize("scratch", SampleRecords.deviceHealthReport()));
        GenericRecord newerRecord = SchemaEdits.project(currentBody, current, newer);
        newerRecord.put("gpuTemperatureC", 91L);

        DeviceHealthReport back = AvroSerde.of(DeviceHealthReport.class, registry).deserializer()
                .deserialize("new", SchemaEdits.frame(newerId, SchemaEdits.encode(newerRecord, newer)));

        assertThat(back).isEqualTo(SampleRecords.deviceHealthReport());
    }

    /**
     * Every released version in src/main/avro-history, registered and framed by hand, decodes into the
     * current class; projecting the result back onto the old schema gives the old bytes again, so
     * nothing the old writer said was lost.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.devhealth.schema.serde.AvroSchemaEvolutionTest#historyFiles")
    void shouldDecodeEveryReleasedSchemaVersionIntoTheCurrentClass(Path historyFile) throws IOException {
        Schema released = new Schema.Parser().parse(Files.readString(historyFile));
        SpecificRecord sample = SampleRecords.allTopLevel().stream()
                .filter(r -> r.getSchema().getFullName().equals(released.getFullName())).findFirst().orElseThrow();
        AvroSerde<SpecificRecord> serde = serdeFor(sample);
        Schema current = sample.getSchema();
        byte[] releasedBody = SchemaEdits.encode(
                SchemaEdits.project(SchemaEdits.body(serde.serializer().serialize("scratch", sample)), current, released),
                released);
        int releasedId = registry.register("history-value", released);

        SpecificRecord back = serde.deserializer().deserialize("history", SchemaEdits.frame(releasedId, releasedBody));
        byte[] currentBody = SchemaEdits.body(serde.serializer().serialize("scratch", back));

        assertThat(SchemaEdits.encode(SchemaEdits.project(currentBody, current, released), released))
                .isEqualTo(releasedBody);
    }

    @Test
    void shouldConfigureFromKafkaPropertiesAndShareTheMemRegistryBetweenInstances() {
        Map<String, Object> config = new HashMap<>();
        config.put(AvroSerde.SCHEMA_REGISTRY_URL_CONFIG, "mem://serde-test-shared");
        config.put(AvroSerde.AVRO_CLASS_CONFIG, NodeEvent.class.getName());
        AvroSerde<NodeEvent> producerSide = new AvroSerde<>();
        producerSide.configure(config, false);
        AvroDeserializer<NodeEvent> consumerSide = new AvroDeserializer<>();
        consumerSide.configure(config, false);

        byte[] bytes = producerSide.serializer().serialize(TOPIC, SampleRecords.eventWithHeartbeat());

        assertThat(consumerSide.deserialize(TOPIC, bytes)).isEqualTo(SampleRecords.eventWithHeartbeat());
        assertThat(SchemaRegistries.inMemory("serde-test-shared").subjects()).containsExactly(TOPIC + "-value");
    }

    @Test
    void shouldRefuseConfigurationWithoutRegistryUrlOrWithNonAvroClass() {
        assertThatThrownBy(() -> new AvroSerde<>().configure(
                Map.of(AvroSerde.AVRO_CLASS_CONFIG, NodeEvent.class.getName()), false))
                .isInstanceOf(ConfigException.class).hasMessageContaining(AvroSerde.SCHEMA_REGISTRY_URL_CONFIG);
        assertThatThrownBy(() -> new AvroSerde<>().configure(
                Map.of(AvroSerde.SCHEMA_REGISTRY_URL_CONFIG, "mem://x", AvroSerde.AVRO_CLASS_CONFIG, "java.lang.String"),
                false))
                .isInstanceOf(ConfigException.class).hasMessageContaining("SpecificRecord");
    }

    @Test
    void shouldRejectRecordOfAnotherTypeOnSerialize() {
        @SuppressWarnings({"unchecked", "rawtypes"})
        AvroSerializer<SpecificRecord> raw = (AvroSerializer) AvroSerde.of(NodeEvent.class, registry).serializer();

        assertThatThrownBy(() -> raw.serialize(TOPIC, SampleRecords.fleetStats()))
                .isInstanceOf(SerializationException.class).hasMessageContaining("FleetStats");
    }

    @Test
    void shouldRejectRecordAvroCannotEncode() {
        DeviceHealthReport broken = SampleRecords.deviceHealthReport();
        broken.setNode(null);

        assertThatThrownBy(() -> AvroSerde.of(DeviceHealthReport.class, registry).serializer().serialize(TOPIC, broken))
                .isInstanceOf(SerializationException.class).hasMessageContaining("Cannot encode DeviceHealthReport");
    }

    @SuppressWarnings("unchecked")
    private AvroSerde<SpecificRecord> serdeFor(SpecificRecord sample) {
        return AvroSerde.of((Class<SpecificRecord>) sample.getClass(), registry);
    }
}
