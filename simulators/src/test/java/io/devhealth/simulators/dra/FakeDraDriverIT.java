package io.devhealth.simulators.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.schema.proto.drahealth.v1alpha1.DeviceHealth;
import io.devhealth.schema.proto.drahealth.v1alpha1.HealthStatus;
import io.devhealth.schema.proto.drahealth.v1alpha1.NodeWatchResourcesRequest;
import io.devhealth.schema.proto.drahealth.v1alpha1.NodeWatchResourcesResponse;
import io.devhealth.schema.proto.pluginregistration.v1.InfoRequest;
import io.devhealth.schema.proto.pluginregistration.v1.PluginInfo;
import io.devhealth.schema.proto.pluginregistration.v1.RegistrationGrpc;
import io.devhealth.schema.proto.pluginregistration.v1.RegistrationStatus;
import io.devhealth.simulators.grpc.RecordingObserver;
import io.devhealth.simulators.grpc.UnixChannels;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FakeDraDriverIT {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String DRIVER = "gpu.example.com";
    private static final Instant NOW = Instant.parse("2026-11-29T10:00:00Z");

    @TempDir
    Path tmp;

    private final List<AutoCloseable> resources = new ArrayList<>();

    @AfterEach
    void closeResources() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
    }

    @Test
    void shouldStreamCurrentSnapshotOnV1alpha1() throws Exception {
        FakeDraDriver driver = driver(Set.of(FakeDraDriver.V1ALPHA1));
        driver.report(DeviceState.healthy("node-a", "gpu-0"),
                DeviceState.unhealthy("node-a", "gpu-1", "XID 79: GPU has fallen off the bus").withTimeoutSeconds(60));

        RecordingObserver<NodeWatchResourcesResponse> stream = watchV1alpha1(channel(driver.serviceSocket()));

        NodeWatchResourcesResponse first = stream.next(WAIT);
        assertThat(first.getDevicesList()).hasSize(2);
        DeviceHealth gpu0 = first.getDevices(0);
        assertThat(gpu0.getDevice().getPoolName()).isEqualTo("node-a");
        assertThat(gpu0.getDevice().getDeviceName()).isEqualTo("gpu-0");
        assertThat(gpu0.getHealth()).isEqualTo(HealthStatus.HEALTHY);
        assertThat(gpu0.getLastUpdatedTime()).isEqualTo(NOW.getEpochSecond());
        assertThat(gpu0.getHealthCheckTimeoutSeconds()).isZero();
        DeviceHealth gpu1 = first.getDevices(1);
        assertThat(gpu1.getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(gpu1.getMessage()).isEqualTo("XID 79: GPU has fallen off the bus");
        assertThat(gpu1.getHealthCheckTimeoutSeconds()).isEqualTo(60);
        assertThat(driver.openStreams()).isEqualTo(1);
        assertThat(driver.openStreams(FakeDraDriver.V1ALPHA1)).isEqualTo(1);
    }

    @Test
    void shouldSendEveryReportOnAnOpenV1Stream() throws Exception {
        FakeDraDriver driver = driver(Set.of(FakeDraDriver.V1ALPHA1, FakeDraDriver.V1));
        RecordingObserver<io.devhealth.schema.proto.drahealth.v1.NodeWatchResourcesResponse> stream =
                watchV1(channel(driver.serviceSocket()));
        driver.awaitStreams(1, WAIT);
        assertThat(stream.pending()).as("nothing is sent before the first report").isZero();

        driver.report(DeviceState.healthy("node-a", "gpu-0"));
        driver.report(DeviceState.unknown("node-a", "gpu-0"), DeviceState.healthy("node-a", "gpu-1"));

        assertThat(stream.next(WAIT).getDevices(0).getHealth())
                .isEqualTo(io.devhealth.schema.proto.drahealth.v1.HealthStatus.HEALTHY);
        var second = stream.next(WAIT);
        assertThat(second.getDevicesList()).extracting(d -> d.getDevice().getDeviceName() + "=" + d.getHealth())
                .containsExactly("gpu-0=UNKNOWN", "gpu-1=HEALTHY");
        assertThat(driver.openStreams(FakeDraDriver.V1)).isEqualTo(1);
        assertThat(driver.reportsSent()).isEqualTo(2);
    }

    @Test
    void shouldGiveANewStreamTheCurrentSnapshot() throws Exception {
        FakeDraDriver driver = driver(Set.of(FakeDraDriver.V1ALPHA1));
        ManagedChannel channel = channel(driver.serviceSocket());
        RecordingObserver<NodeWatchResourcesResponse> early = watchV1alpha1(channel);
        driver.awaitStreams(1, WAIT);
        driver.report(DeviceState.healthy("p", "d0"));
        driver.report(DeviceState.unhealthy("p", "d0", "ecc"));
        early.next(WAIT);
        early.next(WAIT);

        RecordingObserver<NodeWatchResourcesResponse> late = watchV1alpha1(channel);

        NodeWatchResourcesResponse snapshot = late.next(WAIT);
        assertThat(snapshot.getDevicesList()).singleElement()
                .satisfies(d -> assertThat(d.getHealth()).isEqualTo(HealthStatus.UNHEALTHY));
        assertThat(driver.openStreams()).isEqualTo(2);
        assertThat(driver.streamsAccepted()).isEqualTo(2);
        assertThat(driver.currentSnapshot()).containsExactly(DeviceState.unhealthy("p", "d0", "ecc"));
    }

    @Test
    void shouldAnswerUnimplementedWithoutHealthVersions() throws Exception {
        FakeDraDriver driver = driver(Set.of());
        ManagedChannel channel = channel(driver.serviceSocket());

        assertThat(watchV1alpha1(channel).awaitEnd(WAIT).getCode()).isEqualTo(Status.Code.UNIMPLEMENTED);
        assertThat(watchV1(channel).awaitEnd(WAIT).getCode()).isEqualTo(Status.Code.UNIMPLEMENTED);
        assertThat(driver.openStreams()).isZero();
    }

    @Test
    void shouldAnswerUnimplementedForAVersionNotServed() throws Exception {
        FakeDraDriver driver = driver(Set.of(FakeDraDriver.V1ALPHA1));

        assertThat(watchV1(channel(driver.serviceSocket())).awaitEnd(WAIT).getCode())
                .isEqualTo(Status.Code.UNIMPLEMENTED);
    }

    @Test
    void shouldEndOpenStreamsWithUnavailableWhenBroken() throws Exception {
        FakeDraDriver driver = driver(Set.of(FakeDraDriver.V1ALPHA1));
        ManagedChannel channel = channel(driver.serviceSocket());
        RecordingObserver<NodeWatchResourcesResponse> stream = watchV1alpha1(channel);
        driver.awaitStreams(1, WAIT);

        driver.breakStreams();

        assertThat(stream.awaitEnd(WAIT).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(driver.openStreams()).isZero();
        RecordingObserver<NodeWatchResourcesResponse> reconnected = watchV1alpha1(channel);
        driver.awaitStreams(1, WAIT);
        driver.completeStreams();
        assertThat(reconnected.awaitEnd(WAIT).isOk()).isTrue();
    }

    @Test
    void shouldForgetAStreamTheClientCancels() throws Exception {
        FakeDraDriver driver = driver(Set.of(FakeDraDriver.V1ALPHA1));
        ManagedChannel channel = channel(driver.serviceSocket());
        Context.CancellableContext call = Context.current().withCancellation();
        call.run(() -> watchV1alpha1(channel));
        driver.awaitStreams(1, WAIT);

        call.cancel(null);

        long deadline = System.nanoTime() + WAIT.toNanos();
        while (driver.openStreams() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(driver.openStreams()).isZero();
        driver.report(DeviceState.healthy("p", "d"));
        assertThat(driver.reportsSent()).isZero();
    }

    @Test
    void shouldDescribeItselfOnTheRegistrationSocket() throws Exception {
        FakeDraDriver driver = driver(Set.of(FakeDraDriver.V1ALPHA1, FakeDraDriver.V1));
        Path registrationSocket = tmp.resolve("registry").resolve(DRIVER + "-reg.sock");
        assertThat(driver.registrationSocket()).contains(registrationSocket);
        RegistrationGrpc.RegistrationBlockingStub registration =
                RegistrationGrpc.newBlockingStub(channel(registrationSocket));

        PluginInfo info = registration.getInfo(InfoRequest.getDefaultInstance());

        assertThat(info.getType()).isEqualTo("DRAPlugin");
        assertThat(info.getName()).isEqualTo(DRIVER);
        assertThat(info.getEndpoint()).isEqualTo(driver.serviceSocket().toString());
        assertThat(info.getSupportedVersionsList())
                .containsExactly("v1.DRAPlugin", "v1alpha1.DRAResourceHealth", "v1.DRAResourceHealth");
        registration.notifyRegistrationStatus(RegistrationStatus.newBuilder().setPluginRegistered(true).build());
        assertThat(driver.registrationStatuses()).extracting(RegistrationStatus::getPluginRegistered)
                .containsExactly(true);
    }

    @Test
    void shouldAdvertiseOnlyThePluginServiceWithoutHealth() {
        FakeDraDriver driver = driver(Set.of());

        assertThat(driver.pluginInfo().getSupportedVersionsList()).containsExactly("v1.DRAPlugin");
    }

    @Test
    void shouldDeleteSocketsOnClose() {
        FakeDraDriver driver = driver(Set.of(FakeDraDriver.V1ALPHA1));
        Path service = driver.serviceSocket();
        Path registration = driver.registrationSocket().orElseThrow();
        assertThat(service).exists();
        assertThat(registration).exists();

        driver.close();
        driver.close();

        assertThat(Files.exists(service)).isFalse();
        assertThat(Files.exists(registration)).isFalse();
    }

    @Test
    void shouldRejectASocketPathLongerThanSunPath() {
        Path tooLong = tmp.resolve("x".repeat(120)).resolve("dra.sock");

        assertThatThrownBy(() -> FakeDraDriver.builder().driverName(DRIVER).serviceSocket(tooLong).start())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sun_path");
    }

    @Test
    void shouldFailAwaitingStreamsThatNeverOpen() {
        FakeDraDriver driver = driver(Set.of(FakeDraDriver.V1ALPHA1));

        assertThatThrownBy(() -> driver.awaitStreams(1, Duration.ofMillis(50)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("have 0");
    }

    private FakeDraDriver driver(Set<String> versions) {
        FakeDraDriver driver = FakeDraDriver.builder()
                .driverName(DRIVER)
                .serviceSocket(tmp.resolve("plugins").resolve(DRIVER).resolve("dra.sock"))
                .registrationDir(tmp.resolve("registry"))
                .healthVersions(versions)
                .clock(Clock.fixed(NOW, ZoneOffset.UTC))
                .start();
        resources.add(driver);
        return driver;
    }

    private ManagedChannel channel(Path socket) {
        ManagedChannel channel = UnixChannels.open(socket);
        resources.add(() -> UnixChannels.close(channel));
        return channel;
    }

    private static RecordingObserver<NodeWatchResourcesResponse> watchV1alpha1(ManagedChannel channel) {
        RecordingObserver<NodeWatchResourcesResponse> observer = new RecordingObserver<>();
        io.devhealth.schema.proto.drahealth.v1alpha1.DRAResourceHealthGrpc.newStub(channel)
                .nodeWatchResources(NodeWatchResourcesRequest.getDefaultInstance(), observer);
        return observer;
    }

    private static RecordingObserver<io.devhealth.schema.proto.drahealth.v1.NodeWatchResourcesResponse> watchV1(
            ManagedChannel channel) {
        RecordingObserver<io.devhealth.schema.proto.drahealth.v1.NodeWatchResourcesResponse> observer =
                new RecordingObserver<>();
        io.devhealth.schema.proto.drahealth.v1.DRAResourceHealthGrpc.newStub(channel)
                .nodeWatchResources(io.devhealth.schema.proto.drahealth.v1.NodeWatchResourcesRequest.getDefaultInstance(),
                        observer);
        return observer;
    }
}
