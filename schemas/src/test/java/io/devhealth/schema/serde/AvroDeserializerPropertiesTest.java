package io.devhealth.schema.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.DeviceReportEnvelope;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceKind;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.statistics.Statistics;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Bad bytes on any topic (DESIGN §4.7): whatever a consumer is handed, the Confluent-framed Avro
 * deserializer either returns a record or throws {@link SerializationException}, the one exception
 * the dead-letter handlers route, never anything else (no AvroRuntimeException, no
 * ArrayIndexOutOfBounds, no OutOfMemoryError from a forged length).
 */
class AvroDeserializerPropertiesTest {

    private static final String TOPIC = "devhealth.device-reports";

    private final InMemorySchemaRegistry registry = new InMemorySchemaRegistry("properties");
    private final AvroSerializer<DeviceReportEnvelope> serializer = new AvroSerializer<>(DeviceReportEnvelope.class, registry, false);
    private final List<Deserializer<?>> deserializers = List.of(
            new AvroDeserializer<>(DeviceReportEnvelope.class, registry),
            new AvroDeserializer<>(NodeAllocations.class, registry),
            new AvroDeserializer<>(HealthTransition.class, registry));
    private final int knownId;

    AvroDeserializerPropertiesTest() {
        // Registered ids for every deserializer to resolve: the framed-garbage cases get past the header.
        knownId = registry.register(TOPIC + "-value", DeviceReportEnvelope.getClassSchema());
        registry.register("devhealth.node-allocations-value", NodeAllocations.getClassSchema());
        registry.register("devhealth.health-transitions-value", HealthTransition.getClassSchema());
    }

    @Property(tries = 2000)
    void shouldDecodeOrRejectAnyBytes(@ForAll @Size(max = 4096) byte[] data) {
        for (Deserializer<?> deserializer : deserializers) {
            Statistics.label("outcome").collect(outcome(deserializer, data));
        }
    }

    @Property(tries = 2000)
    void shouldDecodeOrRejectAValidHeaderFollowedByGarbage(@ForAll @IntRange(min = 1, max = 3) int id,
                                                           @ForAll @Size(max = 4096) byte[] body) {
        byte[] data = concat(ConfluentWireFormat.header(id), body);
        for (Deserializer<?> deserializer : deserializers) {
            Statistics.label("outcome").collect(outcome(deserializer, data));
        }
    }

    @Property(tries = 1000)
    void shouldRejectEveryTruncatedRecord(@ForAll("reports") DeviceReportEnvelope record, @ForAll("fractions") double cut) {
        byte[] full = serializer.serialize(TOPIC, record);
        int length = (int) Math.floor(cut * full.length);
        byte[] truncated = Arrays.copyOf(full, Math.min(length, full.length - 1));
        assertThatThrownBy(() -> deserializers.get(0).deserialize(TOPIC, truncated)).isInstanceOf(SerializationException.class);
    }

    @Property(tries = 1000)
    void shouldRejectTrailingBytes(@ForAll("reports") DeviceReportEnvelope record, @ForAll @Size(min = 1, max = 64) byte[] trailer) {
        byte[] data = concat(serializer.serialize(TOPIC, record), trailer);
        assertThatThrownBy(() -> deserializers.get(0).deserialize(TOPIC, data)).isInstanceOf(SerializationException.class);
    }

    @Property(tries = 2000)
    void shouldDecodeOrRejectACorruptedRecord(@ForAll("reports") DeviceReportEnvelope record,
                                              @ForAll @Size(min = 1, max = 8) List<@IntRange(min = 0, max = 1 << 20) Integer> positions,
                                              @ForAll byte replacement) {
        byte[] data = serializer.serialize(TOPIC, record);
        for (int position : positions) {
            // Keep the header: corrupting it is covered above; here the body decoder is fuzzed.
            int at = ConfluentWireFormat.HEADER_LENGTH + position % (data.length - ConfluentWireFormat.HEADER_LENGTH);
            data[at] ^= (byte) (replacement == 0 ? 0x5a : replacement);
        }
        for (Deserializer<?> deserializer : deserializers) {
            Statistics.label("outcome").collect(outcome(deserializer, data));
        }
    }

    @Property(tries = 500)
    void shouldRejectAnUnknownSchemaId(@ForAll("reports") DeviceReportEnvelope record, @ForAll int id) {
        byte[] data = serializer.serialize(TOPIC, record);
        int unknown = id >= 1 && id <= 3 ? -id : id;
        ByteBuffer.wrap(data).putInt(1, unknown);
        assertThatThrownBy(() -> deserializers.get(0).deserialize(TOPIC, data))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("Unknown schema id " + unknown);
    }

    @Property(tries = 500)
    void shouldRejectAWrongMagicByte(@ForAll("reports") DeviceReportEnvelope record, @ForAll byte magic) {
        byte[] data = serializer.serialize(TOPIC, record);
        data[0] = magic == 0 ? 1 : magic;
        assertThatThrownBy(() -> deserializers.get(0).deserialize(TOPIC, data)).isInstanceOf(SerializationException.class);
    }

    @Property(tries = 500)
    void shouldRoundTripAnyValidRecord(@ForAll("reports") DeviceReportEnvelope record) {
        assertThat(deserializers.get(0).deserialize(TOPIC, serializer.serialize(TOPIC, record))).isEqualTo(record);
    }

    /** "decoded" or "rejected"; any other exception fails the property. */
    private static String outcome(Deserializer<?> deserializer, byte[] data) {
        try {
            deserializer.deserialize(TOPIC, data);
            return "decoded";
        } catch (SerializationException expected) {
            return "rejected";
        }
    }

    @Provide
    Arbitrary<Double> fractions() {
        return Arbitraries.doubles().between(0.0, 1.0);
    }

    @Provide
    Arbitrary<DeviceReportEnvelope> reports() {
        Arbitrary<String> names = Arbitraries.strings().ofMinLength(0).ofMaxLength(40);
        // Well-formed Unicode (any plane): what protobuf and Avro carry; lone surrogates are not strings on the wire.
        Arbitrary<String> messages = Arbitraries.integers().between(0, Character.MAX_CODE_POINT)
                .filter(cp -> cp < Character.MIN_SURROGATE || cp > Character.MAX_SURROGATE)
                .list().ofMaxSize(600)
                .map(cps -> new String(cps.stream().mapToInt(Integer::intValue).toArray(), 0, cps.size()))
                .injectNull(0.2);
        return Combinators.combine(names, names, messages, Arbitraries.of(HealthStatus.class), Arbitraries.of(ReportKind.class),
                Arbitraries.longs().between(1, 4_102_444_800_000L), Arbitraries.longs().greaterOrEqual(0))
                .as((node, device, message, health, kind, observedAt, sequence) -> new DeviceReportEnvelope(
                        DeviceHealthReport.newBuilder().setNode(node).setSource(SourceKind.DRA).setSourceName("gpu.example.com")
                                .setDevice(DeviceRef.newBuilder().setDriver("gpu.example.com").setPool(node).setDevice(device).build())
                                .setHealth(health).setKind(kind).setMessage(message).setObservedAt(Instant.ofEpochMilli(observedAt))
                                .setCollectorEpoch(1L).setSequence(sequence).build()));
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
