package io.devhealth.collector.dra;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import io.devhealth.collector.podresources.AllocationsMapper;
import io.devhealth.schema.HealthMessages;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.proto.drahealth.v1.DeviceHealth;
import io.devhealth.schema.proto.drahealth.v1.DeviceIdentifier;
import io.devhealth.schema.proto.drahealth.v1.NodeWatchResourcesResponse;
import io.devhealth.schema.proto.podresources.v1.CDIDevice;
import io.devhealth.schema.proto.podresources.v1.ClaimResource;
import io.devhealth.schema.proto.podresources.v1.ContainerDevices;
import io.devhealth.schema.proto.podresources.v1.ContainerResources;
import io.devhealth.schema.proto.podresources.v1.DynamicResource;
import io.devhealth.schema.proto.podresources.v1.ListPodResourcesResponse;
import io.devhealth.schema.proto.podresources.v1.PodResources;
import io.devhealth.schema.serde.AvroSerializer;
import io.devhealth.schema.serde.InMemorySchemaRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.function.Function;
import java.util.stream.LongStream;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Whatever a DRA driver or the kubelet sends over gRPC, the collector turns it into reports and
 * allocation snapshots that are valid for their topic (they encode with the topic's Avro schema),
 * with messages of at most 1024 UTF-8 bytes of well-formed text, and never throws: random bytes
 * (rejected by protobuf before the collector sees them, as gRPC does), unknown fields, unknown enum
 * numbers, negative timeouts, invalid UTF-8, 10 MB messages, empty and 10,000-pod PodResources lists.
 *
 * <p>Seeded random property tests in plain JUnit: each try gets its own {@link Random} seed, shown
 * in the test's display name; {@code -Ddevhealth.seed=N} replays that one try.
 */
class GrpcInputPropertiesTest {

    private static final Instant NOW = Instant.parse("2026-11-29T10:00:00Z");
    private static final InMemorySchemaRegistry REGISTRY = new InMemorySchemaRegistry("grpc-properties");
    private static final AvroSerializer<NodeEvent> REPORTS = new AvroSerializer<>(NodeEvent.class, REGISTRY, false);
    private static final AvroSerializer<NodeAllocations> ALLOCATIONS = new AvroSerializer<>(NodeAllocations.class, REGISTRY, false);

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds2000")
    void shouldRejectOrConvertAnyBytesAsAV1Response(long seed) {
        byte[] wire = bytes(new Random(seed), 0, 2048);
        NodeWatchResourcesResponse response;
        try {
            response = NodeWatchResourcesResponse.parseFrom(wire);
        } catch (InvalidProtocolBufferException e) {
            return;
        }
        assertValid(convert(DraHealthStream.fromV1(response)));
    }

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds2000")
    void shouldRejectOrConvertAnyBytesAsAV1alpha1Response(long seed) {
        byte[] wire = bytes(new Random(seed), 0, 2048);
        io.devhealth.schema.proto.drahealth.v1alpha1.NodeWatchResourcesResponse response;
        try {
            response = io.devhealth.schema.proto.drahealth.v1alpha1.NodeWatchResourcesResponse.parseFrom(wire);
        } catch (InvalidProtocolBufferException e) {
            return;
        }
        assertValid(convert(DraHealthStream.fromV1alpha1(response)));
    }

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds1000")
    void shouldConvertAnyWellFormedResponseWithUnknownFieldsAndEnumNumbers(long seed) throws IOException {
        Random random = new Random(seed);
        NodeWatchResourcesResponse sent = response(random);
        byte[] unknownField = bytes(random, 0, 64);
        // A newer driver: a field this collector's protobuf does not know, appended to the message.
        byte[] wire = concat(sent.toByteArray(), unknownField(999, unknownField));
        NodeWatchResourcesResponse received = NodeWatchResourcesResponse.parseFrom(wire);
        List<ObservedDevice> devices = DraHealthStream.fromV1(received);
        for (int i = 0; i < devices.size(); i++) {
            int wireHealth = sent.getDevices(i).getHealthValue();
            HealthStatus expected = wireHealth == 1 ? HealthStatus.HEALTHY : wireHealth == 2 ? HealthStatus.UNHEALTHY : HealthStatus.UNKNOWN;
            assertThat(devices.get(i).health()).as("seed %d: wire health %s", seed, wireHealth).isEqualTo(expected);
            assertThat(devices.get(i).timeoutSeconds()).as("seed %d", seed).isNotNegative();
        }
        // The same bytes read by the other API version convert the same way.
        List<ObservedDevice> alpha = DraHealthStream.fromV1alpha1(
                io.devhealth.schema.proto.drahealth.v1alpha1.NodeWatchResourcesResponse.parseFrom(wire));
        assertThat(alpha).as("seed %d", seed).isEqualTo(devices);
        assertValid(convert(devices));
    }

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds300")
    void shouldRejectAMessageThatIsNotUtf8(long seed) throws IOException {
        byte[] text = bytes(new Random(seed), 1, 64);
        byte[] invalid = concat(text, new byte[] {(byte) 0xC3, (byte) 0x28, (byte) 0xFF});
        ByteArrayOutputStream device = new ByteArrayOutputStream();
        CodedOutputStream out = CodedOutputStream.newInstance(device);
        out.writeByteArray(5, invalid);
        out.flush();
        ByteArrayOutputStream response = new ByteArrayOutputStream();
        CodedOutputStream top = CodedOutputStream.newInstance(response);
        top.writeByteArray(1, device.toByteArray());
        top.flush();
        // proto3 strings must be UTF-8: the parse fails, which the gRPC stub turns into a failed stream
        // (the collector reconnects with backoff); nothing invalid ever reaches a report.
        try {
            NodeWatchResourcesResponse parsed = NodeWatchResourcesResponse.parseFrom(response.toByteArray());
            assertValid(convert(DraHealthStream.fromV1(parsed)));
        } catch (InvalidProtocolBufferException expected) {
            // Rejected by protobuf: the outcome the comment above expects.
        }
    }

    @Test
    void shouldCutATenMegabyteMessageToTheApiLimit() throws IOException {
        String huge = "XID 79 ✗ ".repeat(10 * 1024 * 1024 / 11);
        NodeWatchResourcesResponse sent = NodeWatchResourcesResponse.newBuilder().addDevices(DeviceHealth.newBuilder()
                .setDevice(DeviceIdentifier.newBuilder().setPoolName("node-a").setDeviceName("gpu-0"))
                .setHealthValue(2).setMessage(huge)).build();
        byte[] wire = sent.toByteArray();
        assertThat(wire.length).isGreaterThanOrEqualTo(10 * 1024 * 1024);

        List<DeviceHealthReport> reports = convert(DraHealthStream.fromV1(NodeWatchResourcesResponse.parseFrom(wire)));

        assertValid(reports);
        assertThat(reports).first().satisfies(r -> {
            assertThat(r.getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
            assertThat(huge).startsWith(r.getMessage());
            assertThat(r.getMessage().getBytes(StandardCharsets.UTF_8).length).isBetween(HealthMessages.MAX_BYTES - 3, HealthMessages.MAX_BYTES);
        });
    }

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds2000")
    void shouldRejectOrMapAnyBytesAsAPodResourcesList(long seed) {
        byte[] wire = bytes(new Random(seed), 0, 2048);
        ListPodResourcesResponse response;
        try {
            response = ListPodResourcesResponse.parseFrom(wire);
        } catch (InvalidProtocolBufferException e) {
            return;
        }
        assertEncodable(AllocationsMapper.map("", "node-a", response, NOW));
    }

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds300")
    void shouldMapAnyPodResourcesList(long seed) throws IOException {
        ListPodResourcesResponse response = podList(new Random(seed));
        NodeAllocations snapshot = AllocationsMapper.map("prod", "node-a", ListPodResourcesResponse.parseFrom(response.toByteArray()), NOW);
        assertEncodable(snapshot);
        long withDevices = response.getPodResourcesList().stream()
                .filter(p -> p.getContainersList().stream().anyMatch(c -> c.getDynamicResourcesCount() + c.getDevicesCount() > 0))
                .count();
        assertThat(snapshot.getPods()).as("seed %d", seed).hasSize((int) withDevices);
    }

    @Test
    void shouldMapAnEmptyPodResourcesList() {
        NodeAllocations snapshot = AllocationsMapper.map("", "node-a", ListPodResourcesResponse.getDefaultInstance(), NOW);
        assertThat(snapshot.getPods()).isEmpty();
        assertEncodable(snapshot);
    }

    @Test
    void shouldMapTenThousandPods() {
        ListPodResourcesResponse.Builder response = ListPodResourcesResponse.newBuilder();
        IntStream.range(0, 10_000).forEach(i -> response.addPodResources(PodResources.newBuilder()
                .setNamespace("ns-" + (i % 50)).setName("pod-" + i)
                .addContainers(ContainerResources.newBuilder().setName("main").addDynamicResources(DynamicResource.newBuilder()
                        .setClaimName("claim-" + i).setClaimNamespace("ns-" + (i % 50))
                        .addClaimResources(ClaimResource.newBuilder().setDriverName("gpu.example.com").setPoolName("node-a")
                                .setDeviceName("gpu-" + (i % 8)).addCdiDevices(CDIDevice.newBuilder().setName("cdi-" + i)))))));

        NodeAllocations snapshot = AllocationsMapper.map("", "node-a", response.build(), NOW);

        assertThat(snapshot.getPods()).hasSize(10_000);
        assertThat(snapshot.getPods()).isSortedAccordingTo(java.util.Comparator
                .comparing(io.devhealth.schema.avro.PodAllocation::getNamespace)
                .thenComparing(io.devhealth.schema.avro.PodAllocation::getName));
        assertEncodable(snapshot);
    }

    private static List<DeviceHealthReport> convert(List<ObservedDevice> devices) {
        SnapshotDiff diff = new SnapshotDiff("", "node-a", "gpu.example.com", Duration.ofSeconds(30),
                Clock.fixed(NOW, ZoneOffset.UTC));
        List<DeviceHealthReport> reports = new ArrayList<>(diff.apply(devices));
        // The next, empty snapshot turns every device ABSENT: those reports must be valid too.
        reports.addAll(diff.apply(List.of()));
        return reports;
    }

    private static void assertValid(List<DeviceHealthReport> reports) {
        for (DeviceHealthReport report : reports) {
            if (report.getMessage() != null) {
                byte[] utf8 = report.getMessage().getBytes(StandardCharsets.UTF_8);
                assertThat(utf8.length).isLessThanOrEqualTo(HealthMessages.MAX_BYTES);
                assertThat(isWellFormed(report.getMessage())).as("well-formed UTF-16/UTF-8").isTrue();
            }
            assertThat(report.getTimeoutSeconds() == null || report.getTimeoutSeconds() > 0).isTrue();
            assertThat(REPORTS.serialize("devhealth.node-events", new NodeEvent(report))).isNotEmpty();
        }
    }

    private static void assertEncodable(NodeAllocations snapshot) {
        assertThat(ALLOCATIONS.serialize("devhealth.node-allocations", snapshot)).isNotEmpty();
    }

    private static boolean isWellFormed(String text) {
        try {
            StandardCharsets.UTF_8.newEncoder().encode(CharBuffer.wrap(text));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }

    private static byte[] unknownField(int number, byte[] value) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        CodedOutputStream out = CodedOutputStream.newInstance(bytes);
        out.writeByteArray(number, value);
        out.writeInt64(number + 1, value.length);
        out.flush();
        return bytes.toByteArray();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        return ByteBuffer.allocate(a.length + b.length).put(a).put(b).array();
    }

    static LongStream seeds2000() {
        return seeds(2000);
    }

    static LongStream seeds1000() {
        return seeds(1000);
    }

    static LongStream seeds300() {
        return seeds(300);
    }

    /** {@code tries} seeds, new each run; {@code -Ddevhealth.seed=N} replays the one try of seed N. */
    private static LongStream seeds(int tries) {
        String replay = System.getProperty("devhealth.seed");
        if (replay != null && !replay.isBlank()) {
            return LongStream.of(Long.parseLong(replay.trim()));
        }
        return new SplittableRandom().longs(tries);
    }

    /** A length in [min, max], the edges drawn more often than their share. */
    private static int size(Random random, int min, int max) {
        return switch (random.nextInt(8)) {
            case 0 -> min;
            case 1 -> max;
            default -> random.nextInt(min, max + 1);
        };
    }

    private static byte[] bytes(Random random, int minLength, int maxLength) {
        byte[] out = new byte[size(random, minLength, maxLength)];
        random.nextBytes(out);
        return out;
    }

    private static <T> List<T> list(Random random, int maxSize, Function<Random, T> element) {
        int size = size(random, 0, maxSize);
        List<T> out = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            out.add(element.apply(random));
        }
        return out;
    }

    /**
     * Well-formed Unicode (any plane): proto3 strings are UTF-8, lone surrogates are not strings on
     * the wire. ASCII, the BMP and the whole range are drawn alike, so every plane shows up.
     */
    private static String text(Random random, int maxCodePoints) {
        int length = size(random, 0, maxCodePoints);
        StringBuilder out = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            int bound = switch (random.nextInt(3)) {
                case 0 -> 0x80;
                case 1 -> 0x10000;
                default -> Character.MAX_CODE_POINT + 1;
            };
            int cp;
            do {
                cp = random.nextInt(bound);
            } while (cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE);
            out.appendCodePoint(cp);
        }
        return out.toString();
    }

    /** Any enum number: mostly around the known ones (-5..5), sometimes far off. */
    private static int healthNumber(Random random) {
        return random.nextInt(10) == 0 ? (random.nextBoolean() ? Integer.MAX_VALUE : random.nextInt()) : random.nextInt(-5, 6);
    }

    /** Any timeout, negative too, with the edges drawn more often. */
    private static long timeout(Random random) {
        return random.nextInt(4) == 0 ? new long[] {0L, -1L, 1L, Long.MIN_VALUE, Long.MAX_VALUE}[random.nextInt(5)] : random.nextLong();
    }

    private static NodeWatchResourcesResponse response(Random random) {
        List<DeviceHealth> devices = list(random, 16, r -> DeviceHealth.newBuilder()
                .setDevice(DeviceIdentifier.newBuilder().setPoolName(text(r, 20)).setDeviceName(text(r, 20)))
                .setHealthValue(healthNumber(r)).setHealthCheckTimeoutSeconds(timeout(r)).setMessage(text(r, 1500)).build());
        return NodeWatchResourcesResponse.newBuilder().addAllDevices(devices).build();
    }

    private static ClaimResource claimResource(Random random) {
        ClaimResource.Builder b = ClaimResource.newBuilder().setDriverName(text(random, 10)).setPoolName(text(random, 10))
                .setDeviceName(text(random, 10));
        list(random, 3, r -> text(r, 10)).forEach(c -> b.addCdiDevices(CDIDevice.newBuilder().setName(c)));
        if (random.nextBoolean()) {
            b.setShareId(text(random, 8));
        }
        return b.build();
    }

    private static ContainerResources container(Random random) {
        List<DynamicResource> dynamics = list(random, 2, r -> DynamicResource.newBuilder().setClaimName(text(r, 10))
                .setClaimNamespace(text(r, 10)).addAllClaimResources(list(r, 3, GrpcInputPropertiesTest::claimResource)).build());
        List<ContainerDevices> plugins = list(random, 2, r -> ContainerDevices.newBuilder().setResourceName(text(r, 10))
                .addAllDeviceIds(list(r, 3, r2 -> text(r2, 10))).build());
        return ContainerResources.newBuilder().setName(text(random, 10)).addAllDynamicResources(dynamics).addAllDevices(plugins).build();
    }

    private static ListPodResourcesResponse podList(Random random) {
        List<PodResources> pods = list(random, 20, r -> PodResources.newBuilder().setNamespace(text(r, 10)).setName(text(r, 10))
                .addAllContainers(list(r, 3, GrpcInputPropertiesTest::container)).build());
        return ListPodResourcesResponse.newBuilder().addAllPodResources(pods).build();
    }
}
