package io.devhealth.collector.ops;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.ClaimAllocation;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.ContainerAllocation;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DevicePluginAllocation;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.testkit.time.MutableClock;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class DeviceHealthGaugesTest {

    private static final String DRIVER = "gpu.example.com";

    private final MutableClock clock = MutableClock.at("2026-12-01T10:00:00Z");
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final DeviceHealthGauges gauges = new DeviceHealthGauges(registry, clock, Duration.ofSeconds(30));

    private DeviceHealthReport dra(String device, HealthStatus health) {
        return DeviceHealthReport.newBuilder().setNode("node-a").setSourceName(DRIVER)
                .setDevice(DeviceRef.newBuilder().setDriver(DRIVER).setPool("node-a").setDevice(device).build())
                .setHealth(health).setKind(ReportKind.CHANGE).setObservedAt(clock.instant()).build();
    }

    private DeviceHealthReport nvml(String uuid, HealthStatus health) {
        return DeviceHealthReport.newBuilder().setNode("node-a").setSourceName("nvml")
                .setDevice(DeviceRef.newBuilder().setUuid(uuid).build())
                .setHealth(health).setKind(ReportKind.CHANGE).setObservedAt(clock.instant()).setTimeoutSeconds(10L).build();
    }

    private static PodAllocation pod(String name, String container, String device) {
        ClaimDevice claimed = ClaimDevice.newBuilder().setDriver(DRIVER).setPool("node-a").setDevice(device).build();
        return PodAllocation.newBuilder().setNamespace("ml").setName(name).setContainers(List.of(ContainerAllocation.newBuilder()
                .setName(container)
                .setClaims(List.of(ClaimAllocation.newBuilder().setClaimName(name + "-gpu").setClaimNamespace("ml")
                        .setDevices(List.of(claimed)).build()))
                .build())).build();
    }

    private static PodAllocation devicePluginPod(String name, String uuid) {
        return PodAllocation.newBuilder().setNamespace("ml").setName(name).setContainers(List.of(ContainerAllocation.newBuilder()
                .setName("main")
                .setDevicePluginResources(List.of(DevicePluginAllocation.newBuilder().setResourceName("nvidia.com/gpu")
                        .setDeviceIds(List.of(uuid)).build()))
                .build())).build();
    }

    private static NodeAllocations allocations(PodAllocation... pods) {
        return NodeAllocations.newBuilder().setNode("node-a").setObservedAt(Instant.EPOCH).setPods(List.of(pods)).build();
    }

    /** The series of {@code device} (DRA device name or UUID) that read 1, as {@code pod/container:health}. */
    private List<String> shown(String device) {
        Map<String, String> current = new TreeMap<>();
        for (Gauge gauge : registry.find(DeviceHealthGauges.NAME).gauges()) {
            boolean ofDevice = device.equals(gauge.getId().getTag("device")) || device.equals(gauge.getId().getTag("UUID"));
            if (ofDevice && gauge.value() == 1.0) {
                current.put(gauge.getId().getTag("pod") + "/" + gauge.getId().getTag("container"), gauge.getId().getTag("health"));
            }
        }
        return current.entrySet().stream().map(e -> e.getKey() + ":" + e.getValue()).toList();
    }

    @Test
    void shouldShowEachDevicesHealthUnderThePodsThatUseIt() {
        gauges.reported(dra("gpu-0", HealthStatus.HEALTHY));
        gauges.reported(dra("gpu-1", HealthStatus.HEALTHY));
        assertThat(shown("gpu-0")).as("no pod uses it yet").containsExactly("/:healthy");

        gauges.allocated(allocations(pod("train-0", "main", "gpu-0"), pod("train-0b", "side", "gpu-0")));
        gauges.reported(dra("gpu-0", HealthStatus.UNHEALTHY));

        assertThat(shown("gpu-0")).containsExactly("train-0/main:unhealthy", "train-0b/side:unhealthy");
        assertThat(shown("gpu-1")).containsExactly("/:healthy");
        assertThat(registry.find(DeviceHealthGauges.NAME).tag("device", "gpu-0").gauges())
                .as("three health states per pod container, nothing left of the unused device's series").hasSize(6);
    }

    @Test
    void shouldMoveADevicesSeriesWhenItsPodsChange() {
        gauges.allocated(allocations(pod("train-0", "main", "gpu-0")));
        gauges.reported(dra("gpu-0", HealthStatus.HEALTHY));

        gauges.allocated(allocations(pod("train-1", "main", "gpu-0")));

        assertThat(shown("gpu-0")).containsExactly("train-1/main:healthy");
        assertThat(registry.find(DeviceHealthGauges.NAME).tag("pod", "train-0").gauges()).isEmpty();
    }

    @Test
    void shouldAttributeAGpuKnownByUuidToTheDevicePluginPodsUsingIt() {
        gauges.allocated(allocations(devicePluginPod("infer-0", "GPU-1234")));
        gauges.reported(nvml("GPU-1234", HealthStatus.UNHEALTHY));

        assertThat(shown("GPU-1234")).containsExactly("infer-0/main:unhealthy");
        assertThat(registry.get(DeviceHealthGauges.NAME).tag("UUID", "GPU-1234").tag("health", "unhealthy").gauge().getId()
                .getTag("source")).isEqualTo("nvml");
    }

    @Test
    void shouldReadUnknownOnceItsSourceIsSilentPastTheDevicesTimeout() {
        gauges.reported(dra("gpu-0", HealthStatus.HEALTHY));
        gauges.reported(nvml("GPU-1234", HealthStatus.HEALTHY));

        clock.advance(Duration.ofSeconds(11));
        assertThat(shown("GPU-1234")).as("its own 10 s timeout").containsExactly("/:unknown");
        assertThat(shown("gpu-0")).as("the collector's default of 30 s").containsExactly("/:healthy");

        clock.advance(Duration.ofSeconds(20));
        assertThat(shown("gpu-0")).containsExactly("/:unknown");

        gauges.reported(dra("gpu-0", HealthStatus.HEALTHY));
        assertThat(shown("gpu-0")).as("a keep-alive makes it fresh again").containsExactly("/:healthy");
    }
}
