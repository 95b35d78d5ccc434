package io.devhealth.processor;

import static io.devhealth.processor.TopologyFixture.NODE;
import static io.devhealth.processor.TopologyFixture.T0;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.DeviceReportEnvelope;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.test.TestRecord;

/**
 * The production topology fed random mixes of good reports and bad records on both input topics:
 * every bad record becomes exactly one dead letter (with its bytes, topic and a reason) and is
 * counted; the good records between them yield exactly the transitions an oracle predicts; the
 * topology never stops.
 */
class TopologyBadInputPropertiesTest {

    /** Long enough that no device goes silent within a run: the oracle has no expiries. */
    private static final TimeoutPolicy NO_SILENCE = new TimeoutPolicy(Duration.ofDays(1), Map.of());

    /** What is piped in; {@code bad} ones must end up as dead letters. */
    sealed interface Input permits Good, Bad {}

    record Good(int device, HealthStatus health) implements Input {}

    enum BadKind { RANDOM_BYTES, EMPTY, TRUNCATED, UNKNOWN_SCHEMA_ID, WRONG_MAGIC, TOMBSTONE, NO_DEVICE_IDENTITY, NO_OBSERVED_AT,
        NULL_KEY, GARBAGE_ALLOCATIONS }

    record Bad(BadKind kind, byte[] noise) implements Input {
        @Override
        public String toString() {
            return "Bad[" + kind + ", " + noise.length + " bytes]";
        }
    }

    @Property(tries = 30)
    void shouldDeadLetterEveryBadRecordAndProcessEveryGoodOne(@ForAll("inputs") List<Input> inputs) {
        try (TopologyFixture fixture = new TopologyFixture(NO_SILENCE)) {
            TestInputTopic<String, byte[]> rawAllocations = fixture.driver.createInputTopic(fixture.topics.nodeAllocations(),
                    Serdes.String().serializer(), Serdes.ByteArray().serializer());
            Map<String, HealthStatus> current = new HashMap<>();
            List<String> expectedTransitions = new ArrayList<>();
            List<byte[]> expectedLetters = new ArrayList<>();
            List<String> expectedTopics = new ArrayList<>();
            Instant at = T0;
            for (Input input : inputs) {
                at = at.plusMillis(100);
                if (input instanceof Good good) {
                    String device = "gpu-" + good.device();
                    fixture.send(TopologyFixture.report(device, good.health(), at));
                    HealthStatus from = current.getOrDefault(device, HealthStatus.UNKNOWN);
                    if (from != good.health()) {
                        expectedTransitions.add(device + ":" + from + "->" + good.health());
                    }
                    current.put(device, good.health());
                } else if (input instanceof Bad bad) {
                    byte[] bytes = badBytes(fixture, bad, at);
                    if (bad.kind() == BadKind.GARBAGE_ALLOCATIONS) {
                        rawAllocations.pipeInput(new TestRecord<>(NODE, bytes, at));
                        expectedTopics.add(fixture.topics.nodeAllocations());
                    } else {
                        String key = bad.kind() == BadKind.NULL_KEY ? null : NODE;
                        fixture.rawReports.pipeInput(new TestRecord<>(key, bytes, at));
                        expectedTopics.add(fixture.topics.deviceReports());
                    }
                    expectedLetters.add(bytes);
                    Statistics.label("bad kind").collect(bad.kind());
                }
            }

            List<HealthTransition> transitions = fixture.transitions.readValuesToList();
            assertThat(transitions).extracting(t -> t.getDevice().getDevice() + ":" + t.getFrom() + "->" + t.getTo())
                    .as("good records between bad ones are processed").isEqualTo(expectedTransitions);
            List<DeadLetter> letters = fixture.deadLetters.readValuesToList();
            assertThat(letters).as("one dead letter per bad record").hasSize(expectedLetters.size());
            for (int i = 0; i < letters.size(); i++) {
                DeadLetter letter = letters.get(i);
                assertThat(letter.getReason()).isNotBlank();
                assertThat(letter.getErrorClass()).isNotBlank();
                assertThat(letter.getSourceTopic()).isEqualTo(expectedTopics.get(i));
                assertThat(bytes(letter.getValue())).as("the original bytes are kept").isEqualTo(expectedLetters.get(i));
            }
            double counted = fixture.meters.find("devhealth.processor.dead.letters").counters().stream()
                    .mapToDouble(c -> c.count()).sum();
            assertThat(counted).as("every dead letter counted").isEqualTo(expectedLetters.size());
        }
    }

    private static byte[] badBytes(TopologyFixture fixture, Bad bad, Instant at) {
        DeviceHealthReport valid = TopologyFixture.report("gpu-0", HealthStatus.UNHEALTHY, at)
                .setCollectorEpoch(TopologyFixture.EPOCH).setSequence(Long.MAX_VALUE).build();
        byte[] encoded = fixture.encode(new DeviceReportEnvelope(valid));
        return switch (bad.kind()) {
            // A random byte string that happens to start with a registered header is not "random" any more.
            case RANDOM_BYTES, GARBAGE_ALLOCATIONS -> bad.noise().length > 0 && bad.noise()[0] == 0
                    ? withFirst((byte) 1, bad.noise()) : bad.noise();
            case EMPTY -> new byte[0];
            case TRUNCATED -> Arrays.copyOf(encoded, Math.floorMod(Arrays.hashCode(bad.noise()), encoded.length - 1));
            case UNKNOWN_SCHEMA_ID -> {
                ByteBuffer.wrap(encoded).putInt(1, 10_000 + Math.floorMod(Arrays.hashCode(bad.noise()), 1_000_000));
                yield encoded;
            }
            case WRONG_MAGIC -> withFirst((byte) (1 + Math.floorMod(Arrays.hashCode(bad.noise()), 255)), encoded);
            case TOMBSTONE -> null;
            case NO_DEVICE_IDENTITY -> fixture.encode(new DeviceReportEnvelope(TopologyFixture.report("", HealthStatus.UNHEALTHY, at)
                    .setDevice(DeviceRef.newBuilder().build()).setCollectorEpoch(TopologyFixture.EPOCH).setSequence(Long.MAX_VALUE)
                    .build()));
            case NO_OBSERVED_AT -> fixture.encode(new DeviceReportEnvelope(TopologyFixture.report("gpu-1", HealthStatus.HEALTHY,
                    Instant.EPOCH).setCollectorEpoch(TopologyFixture.EPOCH).setSequence(Long.MAX_VALUE).build()));
            case NULL_KEY -> encoded;
        };
    }

    private static byte[] withFirst(byte first, byte[] data) {
        byte[] copy = data.clone();
        copy[0] = first;
        return copy;
    }

    @Provide
    Arbitrary<List<Input>> inputs() {
        Arbitrary<Input> good = Arbitraries.integers().between(0, 3)
                .flatMap(device -> Arbitraries.of(HealthStatus.class).map(health -> (Input) new Good(device, health)));
        Arbitrary<Input> bad = Arbitraries.of(BadKind.class)
                .flatMap(kind -> Arbitraries.bytes().array(byte[].class).ofMinSize(1).ofMaxSize(512)
                        .map(noise -> (Input) new Bad(kind, noise)));
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(3, good), net.jqwik.api.Tuple.of(2, bad)).list().ofMinSize(30).ofMaxSize(80);
    }

    private static byte[] bytes(ByteBuffer buffer) {
        if (buffer == null) {
            return null;
        }
        byte[] out = new byte[buffer.remaining()];
        buffer.duplicate().get(out);
        return out;
    }
}
