package io.devhealth.processor;

import static io.devhealth.processor.TopologyFixture.NODE;
import static io.devhealth.processor.TopologyFixture.T0;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.NodeEvent;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The production topology fed random mixes of good reports and bad records on node-events:
 * every bad record becomes exactly one dead letter (with its bytes, topic and a reason) and is
 * counted; the good records between them yield exactly the transitions an oracle predicts; the
 * topology never stops.
 *
 * <p>Seeded random property tests in plain JUnit: each run gets its own {@link Random} seed, shown
 * in the test's display name; {@code -Ddevhealth.seed=N} replays that one run.
 */
class TopologyBadInputPropertiesTest {

    /** Long enough that no device goes silent within a run: the oracle has no expiries. */
    private static final TimeoutPolicy NO_SILENCE = new TimeoutPolicy(Duration.ofDays(1), Map.of());

    /** What is piped in; {@code bad} ones must end up as dead letters. */
    sealed interface Input permits Good, Bad {}

    record Good(int device, HealthStatus health) implements Input {}

    enum BadKind { RANDOM_BYTES, EMPTY, TRUNCATED, UNKNOWN_SCHEMA_ID, WRONG_MAGIC, TOMBSTONE, NO_DEVICE_IDENTITY, NO_OBSERVED_AT,
        NULL_KEY }

    record Bad(BadKind kind, byte[] noise) implements Input {
        @Override
        public String toString() {
            return "Bad[" + kind + ", " + noise.length + " bytes]";
        }
    }

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds")
    void shouldDeadLetterEveryBadRecordAndProcessEveryGoodOne(long seed) {
        List<Input> inputs = inputs(new Random(seed));
        // Flap damping off: the oracle expects one transition per change, and the random inputs flip fast.
        try (TopologyFixture fixture = new TopologyFixture(o -> o.timeouts(NO_SILENCE).flapDamping(FlapPolicy.off()))) {
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
                    String key = bad.kind() == BadKind.NULL_KEY ? null : NODE;
                    fixture.rawEvents.pipeInput(new TestRecord<>(key, bytes, at));
                    expectedTopics.add(fixture.topics.nodeEvents());
                    expectedLetters.add(bytes);
                }
            }

            List<HealthTransition> transitions = fixture.transitions.readValuesToList();
            assertThat(transitions).extracting(t -> t.getDevice().getDevice() + ":" + t.getFrom() + "->" + t.getTo())
                    .as("seed %d: good records between bad ones are processed", seed).isEqualTo(expectedTransitions);
            List<DeadLetter> letters = fixture.deadLetters.readValuesToList();
            assertThat(letters).as("seed %d: one dead letter per bad record", seed).hasSize(expectedLetters.size());
            for (int i = 0; i < letters.size(); i++) {
                DeadLetter letter = letters.get(i);
                assertThat(letter.getReason()).as("seed %d: letter %d reason", seed, i).isNotBlank();
                assertThat(letter.getErrorClass()).as("seed %d: letter %d error class", seed, i).isNotBlank();
                assertThat(letter.getSourceTopic()).as("seed %d: letter %d source topic", seed, i).isEqualTo(expectedTopics.get(i));
                assertThat(bytes(letter.getValue())).as("seed %d: the original bytes are kept", seed).isEqualTo(expectedLetters.get(i));
            }
            double counted = fixture.meters.find("devhealth.processor.dead.letters").counters().stream()
                    .mapToDouble(c -> c.count()).sum();
            assertThat(counted).as("seed %d: every dead letter counted", seed).isEqualTo(expectedLetters.size());
        }
    }

    private static byte[] badBytes(TopologyFixture fixture, Bad bad, Instant at) {
        DeviceHealthReport valid = TopologyFixture.report("gpu-0", HealthStatus.UNHEALTHY, at)
                .setCollectorEpoch(TopologyFixture.EPOCH).setSequence(Long.MAX_VALUE).build();
        byte[] encoded = fixture.encode(new NodeEvent(valid));
        return switch (bad.kind()) {
            // A random byte string that happens to start with a registered header is not "random" any more.
            case RANDOM_BYTES -> bad.noise().length > 0 && bad.noise()[0] == 0
                    ? withFirst((byte) 1, bad.noise()) : bad.noise();
            case EMPTY -> new byte[0];
            case TRUNCATED -> Arrays.copyOf(encoded, Math.floorMod(Arrays.hashCode(bad.noise()), encoded.length - 1));
            case UNKNOWN_SCHEMA_ID -> {
                ByteBuffer.wrap(encoded).putInt(1, 10_000 + Math.floorMod(Arrays.hashCode(bad.noise()), 1_000_000));
                yield encoded;
            }
            case WRONG_MAGIC -> withFirst((byte) (1 + Math.floorMod(Arrays.hashCode(bad.noise()), 255)), encoded);
            case TOMBSTONE -> null;
            case NO_DEVICE_IDENTITY -> fixture.encode(new NodeEvent(TopologyFixture.report("", HealthStatus.UNHEALTHY, at)
                    .setDevice(DeviceRef.newBuilder().build()).setCollectorEpoch(TopologyFixture.EPOCH).setSequence(Long.MAX_VALUE)
                    .build()));
            case NO_OBSERVED_AT -> fixture.encode(new NodeEvent(TopologyFixture.report("gpu-1", HealthStatus.HEALTHY,
                    Instant.EPOCH).setCollectorEpoch(TopologyFixture.EPOCH).setSequence(Long.MAX_VALUE).build()));
            case NULL_KEY -> encoded;
        };
    }

    private static byte[] withFirst(byte first, byte[] data) {
        byte[] copy = data.clone();
        copy[0] = first;
        return copy;
    }

    /** 30 seeds, new each run; {@code -Ddevhealth.seed=N} replays the one run of seed N. */
    static LongStream seeds() {
        String replay = System.getProperty("devhealth.seed");
        if (replay != null && !replay.isBlank()) {
            return LongStream.of(Long.parseLong(replay.trim()));
        }
        return new SplittableRandom().longs(30);
    }

    /** 30–80 inputs, good and bad 3 : 2; a bad one of any kind with 1–512 bytes of noise. */
    private static List<Input> inputs(Random random) {
        int size = random.nextInt(30, 81);
        List<Input> inputs = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            if (random.nextInt(5) < 3) {
                inputs.add(new Good(random.nextInt(4), HealthStatus.values()[random.nextInt(HealthStatus.values().length)]));
            } else {
                BadKind kind = BadKind.values()[random.nextInt(BadKind.values().length)];
                byte[] noise = new byte[random.nextInt(4) == 0 ? (random.nextBoolean() ? 1 : 512) : random.nextInt(1, 513)];
                random.nextBytes(noise);
                inputs.add(new Bad(kind, noise));
            }
        }
        return inputs;
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
