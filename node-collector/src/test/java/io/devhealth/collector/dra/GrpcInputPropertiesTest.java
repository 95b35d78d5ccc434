package io.devhealth.collector.dra;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import io.devhealth.collector.podresources.AllocationsMapper;
import io.devhealth.schema.HealthMessages;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceReportEnvelope;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.NodeAllocations;
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
import java.util.stream.IntStream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.statistics.Statistics;

/**
 * Whatever a DRA driver or the kubelet sends over gRPC, the collector turns it into reports and
 * allocation snapshots that are valid for their topic (they encode with the topic's Avro schema),
 * with messages of at most 1024 UTF-8 bytes of well-formed text, and never throws: random bytes
 * (rejected by protobuf before the collector sees them, as gRPC does), unknown fields, unknown enum
 * numbers, negative timeouts, invalid UTF-8, 10 MB messages, empty and 10,000-pod PodResources lists.
 */
class GrpcInputPropertiesTest {

    private static final Instant NOW = Instant.parse("2026-11-29T10:00:00Z");
    private static final InMemorySchemaRegistry REGISTRY = new InMemorySchemaRegistry("grpc-properties");
    private static final AvroSerializer<DeviceReportEnvelope> REPORTS =
            new AvroSerializer<>(DeviceReportEnvelope.class, REGISTRY, false);
    private static final AvroSerializer<NodeAllocations> ALLOCATIONS = new AvroSerializer<>(NodeAllocations.class, REGISTRY, false);

    @Property(tries = 2000)
    void shouldRejectOrConvertAnyBytesAsAV1Response(@ForAll @Size(max = 2048) byte[] wire) {
        NodeWatchResourcesResponse response;
        try {
            response = NodeWatchResourcesResponse.parseFrom(wire);
        } catch (InvalidProtocolBufferException e) {
            Statistics.label("protobuf").collect("rejected");
            return;
        }
        Statistics.label("protobuf").collect("parsed");
        assertValid(convert(DraHealthStream.fromV1(response)));
    }

    @Property(tries = 2000)
    void shouldRejectOrConvertAnyBytesAsAV1alpha1Response(@ForAll @Size(max = 2048) byte[] wire) {
        io.devhealth.schema.proto.drahealth.v1alpha1.NodeWatchResourcesResponse response;
        try {
            response = io.devhealth.schema.proto.drahealth.v1alpha1.NodeWatchResourcesResponse.parseFrom(wire);
        } catch (InvalidProtocolBufferException e) {
            Statistics.label("protobuf").collect("rejected");
            return;
        }
        Statistics.label("protobuf").collect("parsed");
        assertValid(convert(DraHealthStream.fromV1alpha1(response)));
    }

    @Property(tries = 1000)
    void shouldConvertAnyWellFormedResponseWithUnknownFieldsAndEnumNumbers(@ForAll("responses") NodeWatchResourcesResponse sent,
                                                                          @ForAll @Size(max = 64) byte[] unknownField) throws IOException {
        // A newer driver: a field this collector's protobuf does not know, appended to the message.
        byte[] wire = concat(sent.toByteArray(), unknownField(999, unknownField));
        NodeWatchResourcesResponse received = NodeWatchResourcesResponse.parseFrom(wire);
        List<ObservedDevice> devices = DraHealthStream.fromV1(received);
        for (int i = 0; i < devices.size(); i++) {
            int wireHealth = sent.getDevices(i).getHealthValue();
            HealthStatus expected = wireHealth == 1 ? HealthStatus.HEALTHY : wireHealth == 2 ? HealthStatus.UNHEALTHY : HealthStatus.UNKNOWN;
            assertThat(devices.get(i).health()).as("wire health %s", wireHealth).isEqualTo(expected);
            assertThat(devices.get(i).timeoutSeconds()).isNotNegative();
            Statistics.label("health").collect(expected);
        }
        // The same bytes read by the other API version convert the same way.
        List<ObservedDevice> alpha = DraHealthStream.fromV1alpha1(
                io.devhealth.schema.proto.drahealth.v1alpha1.NodeWatchResourcesResponse.parseFrom(wire));
        assertThat(alpha).isEqualTo(devices);
        assertValid(convert(devices));
    }

    @Property(tries = 300)
    void shouldRejectAMessageThatIsNotUtf8(@ForAll @Size(min = 1, max = 64) byte[] text) throws IOException {
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
            Statistics.label("invalid UTF-8").collect("parsed");
        } catch (InvalidProtocolBufferException e) {
            Statistics.label("invalid UTF-8").collect("rejected");
        }
    }

    @Example
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

    @Property(tries = 2000)
    void shouldRejectOrMapAnyBytesAsAPodResourcesList(@ForAll @Size(max = 2048) byte[] wire) {
        ListPodResourcesResponse response;
        try {
            response = ListPodResourcesResponse.parseFrom(wire);
        } catch (InvalidProtocolBufferException e) {
            Statistics.label("protobuf").collect("rejected");
            return;
        }
        Statistics.label("protobuf").collect("parsed");
        assertEncodable(AllocationsMapper.map("", "node-a", response, NOW));
    }

    @Property(tries = 300)
    void shouldMapAnyPodResourcesList(@ForAll("podLists") ListPodResourcesResponse response) throws IOException {
        NodeAllocations snapshot = AllocationsMapper.map("prod", "node-a", ListPodResourcesResponse.parseFrom(response.toByteArray()), NOW);
        assertEncodable(snapshot);
        long withDevices = response.getPodResourcesList().stream()
                .filter(p -> p.getContainersList().stream().anyMatch(c -> c.getDynamicResourcesCount() + c.getDevicesCount() > 0))
                .count();
        assertThat(snapshot.getPods()).hasSize((int) withDevices);
    }

    @Example
    void shouldMapAnEmptyPodResourcesList() {
        NodeAllocations snapshot = AllocationsMapper.map("", "node-a", ListPodResourcesResponse.getDefaultInstance(), NOW);
        assertThat(snapshot.getPods()).isEmpty();
        assertEncodable(snapshot);
    }

    @Example
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
            assertThat(REPORTS.serialize("devhealth.device-reports", new DeviceReportEnvelope(report))).isNotEmpty();
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

    private static Arbitrary<String> text(int maxCodePoints) {
        return Arbitraries.integers().between(0, Character.MAX_CODE_POINT)
                .filter(cp -> cp < Character.MIN_SURROGATE || cp > Character.MAX_SURROGATE)
                .list().ofMaxSize(maxCodePoints)
                .map(cps -> new String(cps.stream().mapToInt(Integer::intValue).toArray(), 0, cps.size()));
    }

    @Provide
    Arbitrary<NodeWatchResourcesResponse> responses() {
        Arbitrary<DeviceHealth> device = Combinators.combine(text(20), text(20),
                        Arbitraries.integers().between(-5, 5).injectDuplicates(0.1).edgeCases(e -> e.add(Integer.MAX_VALUE)),
                        Arbitraries.longs(), text(1500))
                .as((pool, name, health, timeout, message) -> DeviceHealth.newBuilder()
                        .setDevice(DeviceIdentifier.newBuilder().setPoolName(pool).setDeviceName(name))
                        .setHealthValue(health).setHealthCheckTimeoutSeconds(timeout).setMessage(message).build());
        return device.list().ofMaxSize(16).map(devices -> NodeWatchResourcesResponse.newBuilder().addAllDevices(devices).build());
    }

    @Provide
    Arbitrary<ListPodResourcesResponse> podLists() {
        Arbitrary<ClaimResource> claimResource = Combinators.combine(text(10), text(10), text(10), text(10).list().ofMaxSize(3),
                        text(8).injectNull(0.5))
                .as((driver, pool, name, cdis, share) -> {
                    ClaimResource.Builder b = ClaimResource.newBuilder().setDriverName(driver).setPoolName(pool).setDeviceName(name);
                    cdis.forEach(c -> b.addCdiDevices(CDIDevice.newBuilder().setName(c)));
                    if (share != null) {
                        b.setShareId(share);
                    }
                    return b.build();
                });
        Arbitrary<DynamicResource> dynamic = Combinators.combine(text(10), text(10), claimResource.list().ofMaxSize(3))
                .as((claim, ns, resources) -> DynamicResource.newBuilder().setClaimName(claim).setClaimNamespace(ns)
                        .addAllClaimResources(resources).build());
        Arbitrary<ContainerDevices> plugin = Combinators.combine(text(10), text(10).list().ofMaxSize(3))
                .as((resource, ids) -> ContainerDevices.newBuilder().setResourceName(resource).addAllDeviceIds(ids).build());
        Arbitrary<ContainerResources> container = Combinators.combine(text(10), dynamic.list().ofMaxSize(2), plugin.list().ofMaxSize(2))
                .as((name, dynamics, plugins) -> ContainerResources.newBuilder().setName(name).addAllDynamicResources(dynamics)
                        .addAllDevices(plugins).build());
        Arbitrary<PodResources> pod = Combinators.combine(text(10), text(10), container.list().ofMaxSize(3))
                .as((ns, name, containers) -> PodResources.newBuilder().setNamespace(ns).setName(name).addAllContainers(containers).build());
        return pod.list().ofMaxSize(20).map(pods -> ListPodResourcesResponse.newBuilder().addAllPodResources(pods).build());
    }
}
