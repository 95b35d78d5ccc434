package io.devhealth.schema.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.schema.avro.PodDeviceStatus;
import java.util.Arrays;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

class EncodedSerdeTest {

    private static final String TOPIC = "devhealth.pod-device-status";

    private final InMemorySchemaRegistry registry = new InMemorySchemaRegistry("encoded-serde-test");
    private final AvroSerde<PodDeviceStatus> avro = AvroSerde.of(PodDeviceStatus.class, registry);
    private final EncodedSerde<PodDeviceStatus> serde = EncodedSerde.over(avro);

    @Test
    void shouldEncodeOnceForTheTopicsSubjectExactlyAsTheAvroSerializerDoes() {
        PodDeviceStatus status = SampleRecords.podDeviceStatus();

        Encoded<PodDeviceStatus> encoded = serde.encode(TOPIC, status);

        assertThat(encoded.value()).isSameAs(status);
        assertThat(encoded.bytes()).containsExactly(avro.serializer().serialize(TOPIC, status));
    }

    @Test
    void shouldWriteTheBytesItCarriesWhateverTheTopicAndWhateverBecameOfTheDecodedValue() {
        PodDeviceStatus status = SampleRecords.podDeviceStatus();
        Encoded<PodDeviceStatus> encoded = serde.encode(TOPIC, status);
        byte[] asEncoded = Arrays.copyOf(encoded.bytes(), encoded.bytes().length);

        status.setNode("somewhere-else");

        // A store's changelog gets the topic's bytes and schema id: nothing is encoded again.
        assertThat(serde.serializer().serialize("app-pod-status-changelog", encoded)).isSameAs(encoded.bytes())
                .containsExactly(asEncoded);
        assertThat(registry.subjects()).containsExactly(TOPIC + "-value");
    }

    @Test
    void shouldReadTheRecordAndKeepTheBytesItWasReadFrom() {
        byte[] bytes = avro.serializer().serialize(TOPIC, SampleRecords.podDeviceStatus());

        Encoded<PodDeviceStatus> read = serde.deserializer().deserialize(TOPIC, bytes);

        assertThat(read.value()).isEqualTo(SampleRecords.podDeviceStatus());
        assertThat(read.bytes()).isSameAs(bytes);
        assertThat(serde.serializer().serialize(TOPIC, read)).isSameAs(bytes);
    }

    @Test
    void shouldKeepTombstonesTombstones() {
        assertThat(serde.encode(TOPIC, null)).isNull();
        assertThat(serde.serializer().serialize(TOPIC, null)).isNull();
        assertThat(serde.deserializer().deserialize(TOPIC, null)).isNull();
    }

    @Test
    void shouldRefuseBytesThatDoNotDecodeAsTheAvroDeserializerDoes() {
        assertThatThrownBy(() -> serde.deserializer().deserialize(TOPIC, new byte[] {0, 0, 0, 0, 1, 42}))
                .isInstanceOf(SerializationException.class);
    }

    @Test
    void shouldCompareByTheDecodedValue() {
        Encoded<PodDeviceStatus> encoded = serde.encode(TOPIC, SampleRecords.podDeviceStatus());
        Encoded<PodDeviceStatus> read = serde.deserializer().deserialize(TOPIC, encoded.bytes());

        assertThat(read).isEqualTo(encoded).hasSameHashCodeAs(encoded);
    }
}
