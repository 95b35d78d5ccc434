package io.devhealth.processor;

import static io.devhealth.processor.TopologyFixture.EPOCH;
import static io.devhealth.processor.TopologyFixture.NODE;
import static io.devhealth.processor.TopologyFixture.T0;
import static io.devhealth.processor.TopologyFixture.allocation;
import static io.devhealth.processor.TopologyFixture.devicePluginAllocation;
import static io.devhealth.processor.TopologyFixture.nvml;
import static io.devhealth.processor.TopologyFixture.report;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.PodDeviceStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A pod leaves the kubelet's PodResources when its containers have finished (its claims are
 * unprepared), often seconds before its driver reports the failure that killed it. For the
 * termination window such a pod still receives its devices' changes; after it, and once a pod of
 * the same name is back on the node, it does not.
 */
class DepartedPodsTest {

    private static final Duration WINDOW = Duration.ofMinutes(2);
    private final TopologyFixture fixture = new TopologyFixture(options -> options.terminationWindow(WINDOW));
    private long sequence = 1_000;

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    @Test
    void shouldBringAnUnhealthyReportAfterThePodLeftTheNodeToItsStatusWithinTheWindow() {
        snapshot(T0, allocation("train-0", T0, EPOCH, 0, "gpu-0"));
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        snapshot(T0.plusSeconds(10), nothing(T0.plusSeconds(10)));
        fixture.podStatus.readValuesToList();

        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(12)).setMessage("XID 79"));

        assertThat(fixture.podStatus.readValuesToList()).singleElement().satisfies(status -> {
            assertThat(status.getPod().getName()).isEqualTo("train-0");
            assertThat(status.getSummary()).isEqualTo(HealthStatus.UNHEALTHY);
            assertThat(device(status).getMessage()).isEqualTo("XID 79");
        });
    }

    @Test
    void shouldNotLetARepairOrSilenceAfterThePodLeftChangeWhatItsStatusSays() {
        snapshot(T0, allocation("train-0", T0, EPOCH, 0, "gpu-0", "gpu-1"));
        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(1)).setMessage("XID 79"));
        fixture.send(report("gpu-1", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        snapshot(T0.plusSeconds(10), nothing(T0.plusSeconds(10)));
        fixture.podStatus.readValuesToList();

        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(20)));
        fixture.send(report("gpu-1", HealthStatus.UNKNOWN, T0.plusSeconds(20)));
        assertThat(fixture.podStatus.readValuesToList()).as("a repair and an Unknown after the pod left").isEmpty();

        fixture.send(report("gpu-1", HealthStatus.UNHEALTHY, T0.plusSeconds(30)).setMessage("XID 48"));
        assertThat(fixture.podStatus.readValuesToList()).singleElement().satisfies(status -> {
            assertThat(status.getSummary()).isEqualTo(HealthStatus.UNHEALTHY);
            List<io.devhealth.schema.avro.DeviceStatus> devices = status.getContainers().get(0).getClaims().get(0).getDevices();
            assertThat(devices).extracting(d -> d.getHealth()).containsExactly(HealthStatus.UNHEALTHY, HealthStatus.UNHEALTHY);
            assertThat(devices).extracting(d -> d.getMessage()).containsExactly("XID 79", "XID 48");
        });
    }

    @Test
    void shouldKeepADepartedPodAcrossSnapshotsUntilItsWindowEndsAndNotAfter() {
        snapshot(T0, allocation("train-0", T0, EPOCH, 0, "gpu-0"));
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        snapshot(T0.plusSeconds(10), nothing(T0.plusSeconds(10)));
        // Re-sent snapshots without the pod do not restart its window.
        snapshot(T0.plusSeconds(70), nothing(T0.plusSeconds(70)));
        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(100)));
        assertThat(fixture.podStatus.readValuesToList()).as("100 s after it left").last()
                .satisfies(status -> assertThat(status.getSummary()).isEqualTo(HealthStatus.UNHEALTHY));

        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(10).plus(WINDOW)));
        assertThat(fixture.podStatus.readValuesToList()).as("at the end of its window, before another snapshot").isEmpty();
        snapshot(T0.plusSeconds(200), nothing(T0.plusSeconds(200)));
        assertThat(fixture.podStatus.readRecordsToList()).as("the first snapshot after the window releases the pod")
                .singleElement().satisfies(release -> {
                    assertThat(release.key()).isEqualTo("ml/train-0");
                    assertThat(release.value()).isNull();
                });
        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(201)));
        assertThat(fixture.podStatus.readValuesToList()).as("after the window").isEmpty();
    }

    @Test
    void shouldBringAnUnhealthyReportInTheLastMillisecondOfTheWindowToTheDepartedPodsStatus() {
        departAtTenSeconds();

        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(10).plus(WINDOW).minusMillis(1)).setMessage("XID 79"));

        assertThat(fixture.podStatus.readValuesToList()).as("the last millisecond of the window").singleElement()
                .satisfies(status -> assertThat(device(status).getMessage()).isEqualTo("XID 79"));
    }

    @Test
    void shouldNotBringAnUnhealthyReportAtTheWindowsEndToTheDepartedPodsStatus() {
        departAtTenSeconds();

        // No snapshot has come since the window ended, so the departed pod is still kept: only the window's end stops it.
        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(10).plus(WINDOW)).setMessage("XID 79"));

        assertThat(fixture.podStatus.readValuesToList()).as("the window's end is outside it").isEmpty();
    }

    /** train-0 holds gpu-0 (Healthy) and leaves the node at T0 + 10 s; its statuses so far are read. */
    private void departAtTenSeconds() {
        snapshot(T0, allocation("train-0", T0, EPOCH, 0, "gpu-0"));
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        snapshot(T0.plusSeconds(10), nothing(T0.plusSeconds(10)));
        fixture.podStatus.readValuesToList();
    }

    @Test
    void shouldNotLetARepairAfterADevicePluginPodLeftChangeWhatItsStatusSays() {
        // A GPU given through the device plugin (a PodResources device id, the GPU's UUID), not a DRA claim.
        snapshot(T0, devicePluginAllocation("infer-0", T0, EPOCH, 0, "nvidia.com/gpu", "GPU-dp-0"));
        fixture.send(nvml("GPU-dp-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        fixture.send(nvml("GPU-dp-0", HealthStatus.UNHEALTHY, T0.plusSeconds(8)).setMessage("XID 79"));
        snapshot(T0.plusSeconds(10), nothing(T0.plusSeconds(10)));
        assertThat(fixture.podStatus.readValuesToList()).last().satisfies(status -> {
            assertThat(status.getSummary()).isEqualTo(HealthStatus.UNHEALTHY);
            assertThat(pluginDevice(status).getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
        });

        fixture.send(nvml("GPU-dp-0", HealthStatus.HEALTHY, T0.plusSeconds(12)));

        assertThat(fixture.podStatus.readValuesToList()).as("a repair after the pod left").isEmpty();
    }

    @Test
    void shouldLetAPodOfTheSameNameBackOnTheNodeReplaceTheDepartedOne() {
        snapshot(T0, allocation("train-0", T0, EPOCH, 0, "gpu-0"));
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        fixture.send(report("gpu-1", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        snapshot(T0.plusSeconds(10), nothing(T0.plusSeconds(10)));
        snapshot(T0.plusSeconds(20), allocation("train-0", T0.plusSeconds(20), EPOCH, 0, "gpu-1"));
        fixture.podStatus.readValuesToList();

        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(30)));

        assertThat(fixture.podStatus.readValuesToList()).as("the new train-0 holds gpu-1 only").isEmpty();
    }

    @Test
    void shouldStopReachingADepartedPodOnceAnotherPodHoldsItsDevice() {
        snapshot(T0, allocation("train-0", T0, EPOCH, 0, "gpu-0"));
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        snapshot(T0.plusSeconds(10), nothing(T0.plusSeconds(10)));
        // The Job's replacement is given the same GPU.
        snapshot(T0.plusSeconds(20), allocation("train-0-retry", T0.plusSeconds(20), EPOCH, 0, "gpu-0"));
        fixture.podStatus.readValuesToList();

        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(30)).setMessage("XID 79"));

        assertThat(fixture.podStatus.readValuesToList()).extracting(s -> s.getPod().getName())
                .as("the failure is the replacement's, not the departed pod's").containsExactly("train-0-retry");
    }

    @Test
    void shouldNotKeepAnythingWithAWindowOfZero() {
        TopologyFixture noWindow = new TopologyFixture(options -> options.terminationWindow(Duration.ZERO));
        try {
            noWindow.pipe(NODE, allocation("train-0", T0, EPOCH, 1, "gpu-0"), T0);
            noWindow.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
            NodeAllocations empty = NodeAllocations.newBuilder(allocation("train-0", T0.plusSeconds(10), EPOCH, 2)).setPods(List.of()).build();
            noWindow.pipe(NODE, empty, T0.plusSeconds(10));
            noWindow.podStatus.readValuesToList();
            noWindow.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(12)));
            assertThat(noWindow.podStatus.readValuesToList()).isEmpty();
        } finally {
            noWindow.close();
        }
    }

    private void snapshot(Instant at, NodeAllocations snapshot) {
        fixture.pipe(NODE, NodeAllocations.newBuilder(snapshot).setSequence(++sequence).build(), at);
    }

    /** The node's snapshot once no pod holds a device. */
    private static NodeAllocations nothing(Instant at) {
        return NodeAllocations.newBuilder(allocation("none", at, EPOCH, 0)).setPods(List.of()).build();
    }

    private static io.devhealth.schema.avro.DeviceStatus device(PodDeviceStatus status) {
        return status.getContainers().get(0).getClaims().get(0).getDevices().get(0);
    }

    private static io.devhealth.schema.avro.DeviceStatus pluginDevice(PodDeviceStatus status) {
        return status.getContainers().get(0).getDevicePluginResources().get(0).getDevices().get(0);
    }
}
