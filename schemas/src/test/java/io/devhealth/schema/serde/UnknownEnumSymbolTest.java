package io.devhealth.schema.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.SourceKind;
import java.io.IOException;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.junit.jupiter.api.Test;

/**
 * A newer producer may add enum symbols (a DEGRADED health, a GPUD source). Consumers built against
 * today's schema must decode them to the enum's declared default instead of failing, because a
 * record they cannot read stops a Kafka Streams task or lands in the dead-letter topic.
 */
class UnknownEnumSymbolTest {

    private static final String TOPIC = "devhealth.node-events-v2";

    private final InMemorySchemaRegistry registry = new InMemorySchemaRegistry("enum-test");
    private final AvroSerde<DeviceHealthReport> serde = AvroSerde.of(DeviceHealthReport.class, registry);

    @Test
    void shouldDecodeUnknownHealthStatusSymbolAsUnknown() throws IOException {
        Schema newer = SchemaEdits.edit(DeviceHealthReport.getClassSchema(),
                SchemaEdits.addEnumSymbol("HealthStatus", "DEGRADED"));
        byte[] body = newerBody(newer, "health", "DEGRADED");

        DeviceHealthReport back = serde.deserializer().deserialize(TOPIC,
                SchemaEdits.frame(registry.register(TOPIC + "-value", newer), body));

        assertThat(back.getHealth()).isEqualTo(HealthStatus.UNKNOWN);
        assertThat(back.getSource()).isEqualTo(SourceKind.DRA);
        assertThat(back.getNode()).isEqualTo("node-a");
        assertNotDecodableWithoutResolution(body);
    }

    @Test
    void shouldDecodeUnknownSourceKindSymbolAsOther() throws IOException {
        Schema newer = SchemaEdits.edit(DeviceHealthReport.getClassSchema(),
                SchemaEdits.addEnumSymbol("SourceKind", "GPUD"));
        byte[] body = newerBody(newer, "source", "GPUD");

        DeviceHealthReport back = serde.deserializer().deserialize(TOPIC,
                SchemaEdits.frame(registry.register(TOPIC + "-value", newer), body));

        assertThat(back.getSource()).isEqualTo(SourceKind.OTHER);
        assertThat(back.getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
        assertNotDecodableWithoutResolution(body);
    }

    /** The sample report, written with {@code newer} and one enum field set to the new symbol. */
    private byte[] newerBody(Schema newer, String field, String symbol) {
        Schema current = DeviceHealthReport.getClassSchema();
        byte[] currentBody = SchemaEdits.body(serde.serializer().serialize("scratch", SampleRecords.deviceHealthReport()));
        GenericRecord record = SchemaEdits.project(currentBody, current, newer);
        record.put(field, new GenericData.EnumSymbol(newer.getField(field).schema(), symbol));
        return SchemaEdits.encode(record, newer);
    }

    /**
     * Control: the new symbol's index is past the end of today's enum, so decoding the same bytes as if
     * they had been written with today's schema fails. The tests above pass only through resolution
     * to the default.
     */
    private static void assertNotDecodableWithoutResolution(byte[] body) {
        Schema current = DeviceHealthReport.getClassSchema();
        SpecificDatumReader<DeviceHealthReport> naive = new SpecificDatumReader<>(current, current,
                SpecificData.getForClass(DeviceHealthReport.class));

        assertThatThrownBy(() -> naive.read(null, DecoderFactory.get().binaryDecoder(body, null)))
                .isInstanceOfAny(ArrayIndexOutOfBoundsException.class, org.apache.avro.AvroRuntimeException.class,
                        IOException.class);
    }
}
