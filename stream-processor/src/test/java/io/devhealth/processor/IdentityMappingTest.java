package io.devhealth.processor;

import static io.devhealth.processor.TopologyFixture.DRIVER;
import static io.devhealth.processor.TopologyFixture.EPOCH;
import static io.devhealth.processor.TopologyFixture.NODE;
import static io.devhealth.processor.TopologyFixture.T0;
import static io.devhealth.processor.TopologyFixture.nvml;
import static io.devhealth.processor.TopologyFixture.report;
import static io.devhealth.processor.TopologyFixture.uuid;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import io.devhealth.processor.internals.rules.DeviceState;
import io.devhealth.schema.avro.DevicePluginResourceStatus;
import io.devhealth.schema.avro.DeviceStatus;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.InventoryDevice;
import io.devhealth.schema.avro.NodeDevices;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.SourceKind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** NVML reports (GPU UUID only) meet DRA devices and device-plugin allocations through the node's inventory. */
class IdentityMappingTest {

    private static final String GPU0_KEY = NODE + "/" + DRIVER + "/" + NODE + "/gpu-0";
    private static final String GPU0_UUID_KEY = NODE + "/uuid:" + uuid("gpu-0");

    private final TopologyFixture fixture = new TopologyFixture();

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    private KeyValueStore<String, DeviceState> deviceStore() {
        return fixture.driver.getKeyValueStore(DeviceHealthTopology.DEVICE_STATE_STORE);
    }

    private List<String> deviceKeys() {
        List<String> keys = new ArrayList<>();
        try (var all = deviceStore().all()) {
            all.forEachRemaining(kv -> keys.add(kv.key));
        }
        return keys;
    }

    private PodDeviceStatus lastPodStatus() {
        List<PodDeviceStatus> statuses = fixture.podStatus.readValuesToList();
        assertThat(statuses).isNotEmpty();
        return statuses.get(statuses.size() - 1);
    }

    private static DeviceStatus claimDevice(PodDeviceStatus status) {
        return status.getContainers().get(0).getClaims().get(0).getDevices().get(0);
    }

    @Test
    void shouldMergeNvmlReportIntoTheDraDeviceWhenTheInventoryCameFirst() {
        fixture.inventory("gpu-0", "gpu-1");
        fixture.allocate("train-0", "gpu-0");
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        fixture.send(nvml(uuid("gpu-0"), HealthStatus.UNHEALTHY, T0.plusSeconds(2)).setMessage("XID 79: GPU fell off the bus")
                .setReason("XID-79"));

        List<HealthTransition> transitions = fixture.transitions.readValuesToList();
        assertThat(transitions).extracting(HealthTransition::getFrom, HealthTransition::getTo)
                .containsExactly(tuple(HealthStatus.UNKNOWN, HealthStatus.HEALTHY), tuple(HealthStatus.HEALTHY, HealthStatus.UNHEALTHY));
        HealthTransition failure = transitions.get(1);
        assertThat(failure.getDevice().getDevice()).as("NVML's word lands on the DRA device").isEqualTo("gpu-0");
        assertThat(failure.getDevice().getUuid()).isEqualTo(uuid("gpu-0"));
        assertThat(failure.getSource()).isEqualTo(SourceKind.NVML);
        assertThat(failure.getReason()).isEqualTo("XID-79");
        assertThat(failure.getMessage()).contains("nvml (NVML)").contains("XID 79");
        assertThat(failure.getAffectedPods()).extracting(p -> p.getName()).containsExactly("train-0");

        PodDeviceStatus status = lastPodStatus();
        assertThat(status.getSummary()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(claimDevice(status).getReason()).isEqualTo("XID-79");
        assertThat(deviceKeys()).as("no separate UUID-only device").containsExactly(GPU0_KEY);
        assertThat(deviceStore().get(GPU0_KEY).sources()).containsOnlyKeys("DRA:" + DRIVER, "NVML:nvml");
    }

    @Test
    void shouldRecoverWhenNvmlReportsHealthyAgainWhileTheDraDriverStaysHealthy() {
        fixture.inventory("gpu-0");
        fixture.allocate("train-0", "gpu-0");
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        fixture.send(nvml(uuid("gpu-0"), HealthStatus.UNHEALTHY, T0.plusSeconds(2)).setReason("XID-48"));
        fixture.send(nvml(uuid("gpu-0"), HealthStatus.HEALTHY, T0.plusSeconds(3)));

        assertThat(fixture.transitions.readValuesToList()).extracting(HealthTransition::getTo)
                .containsExactly(HealthStatus.HEALTHY, HealthStatus.UNHEALTHY, HealthStatus.HEALTHY);
        List<PodDeviceStatus> statuses = fixture.podStatus.readValuesToList();
        assertThat(statuses).extracting(PodDeviceStatus::getSummary)
                .containsExactly(HealthStatus.UNKNOWN, HealthStatus.HEALTHY, HealthStatus.UNHEALTHY, HealthStatus.HEALTHY);
    }

    @Test
    void shouldKeepAnUnmappedUuidReportAndMoveItOntoTheDraDeviceWhenTheInventoryArrives() {
        fixture.allocate("train-0", "gpu-0");
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        fixture.send(nvml(uuid("gpu-0"), HealthStatus.UNHEALTHY, T0.plusSeconds(2)).setReason("XID-79").setMessage("XID 79"));

        List<HealthTransition> before = fixture.transitions.readValuesToList();
        assertThat(before).extracting(t -> t.getDevice().getDriver(), t -> t.getDevice().getUuid(), HealthTransition::getTo)
                .containsExactly(tuple(DRIVER, null, HealthStatus.HEALTHY), tuple("", uuid("gpu-0"), HealthStatus.UNHEALTHY));
        assertThat(lastPodStatus().getSummary()).as("the pod's DRA device does not know the UUID yet").isEqualTo(HealthStatus.HEALTHY);
        assertThat(deviceKeys()).containsExactlyInAnyOrder(GPU0_KEY, GPU0_UUID_KEY);

        fixture.inventory("gpu-0");

        List<HealthTransition> after = fixture.transitions.readValuesToList();
        assertThat(after).singleElement().satisfies(t -> {
            assertThat(t.getDevice().getDevice()).isEqualTo("gpu-0");
            assertThat(t.getFrom()).isEqualTo(HealthStatus.HEALTHY);
            assertThat(t.getTo()).isEqualTo(HealthStatus.UNHEALTHY);
            assertThat(t.getReason()).isEqualTo("XID-79");
            assertThat(t.getAt()).as("at the node's time, not the wall clock").isEqualTo(T0.plusSeconds(2));
            assertThat(t.getAffectedPods()).extracting(p -> p.getName()).containsExactly("train-0");
        });
        assertThat(lastPodStatus().getSummary()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(deviceKeys()).as("the UUID-only state moved, nothing lost, nothing doubled").containsExactly(GPU0_KEY);

        fixture.send(nvml(uuid("gpu-0"), HealthStatus.HEALTHY, T0.plusSeconds(3)));
        assertThat(fixture.transitions.readValuesToList()).extracting(t -> t.getDevice().getDevice(), HealthTransition::getTo)
                .containsExactly(tuple("gpu-0", HealthStatus.HEALTHY));
        assertThat(deviceKeys()).containsExactly(GPU0_KEY);
    }

    @Test
    void shouldKeepAUuidTheInventoryDoesNotKnowUnderItsUuid() {
        fixture.inventory("gpu-0");
        fixture.send(nvml("GPU-not-in-any-slice", HealthStatus.UNHEALTHY, T0.plusSeconds(1)));

        assertThat(fixture.transitions.readValuesToList()).singleElement()
                .satisfies(t -> assertThat(t.getDevice().getUuid()).isEqualTo("GPU-not-in-any-slice"));
        assertThat(deviceKeys()).containsExactly(NODE + "/uuid:GPU-not-in-any-slice");
    }

    @Test
    void shouldApplyOneUuidToEveryDraDeviceCarryingItWithDistinctTransitionIds() {
        // MIG: the slices of one GPU all carry the parent GPU's UUID in the inventory.
        NodeDevices inventory = NodeDevices.newBuilder().setNode(NODE).setObservedAt(T0)
                .setDevices(List.of(
                        InventoryDevice.newBuilder().setDriver(DRIVER).setPool(NODE).setDevice("gpu-0-mig-1g-0").setUuid("GPU-P").build(),
                        InventoryDevice.newBuilder().setDriver(DRIVER).setPool(NODE).setDevice("gpu-0-mig-1g-1").setUuid("GPU-P").build()))
                .setCollectorEpoch(EPOCH).setSequence(1).build();
        fixture.pipe(NODE, inventory, T0);
        fixture.send(nvml("GPU-P", HealthStatus.UNHEALTHY, T0.plusSeconds(1)).setReason("XID-79"));

        List<HealthTransition> transitions = fixture.transitions.readValuesToList();
        assertThat(transitions).extracting(t -> t.getDevice().getDevice()).containsExactlyInAnyOrder("gpu-0-mig-1g-0", "gpu-0-mig-1g-1");
        assertThat(transitions).extracting(HealthTransition::getId).doesNotHaveDuplicates();
    }

    @Test
    void shouldGiveADevicePluginPodTheHealthNvmlReportsForItsGpuUuid() {
        fixture.allocateDevicePlugin("infer-0", "nvidia.com/gpu", "GPU-dp-0");
        fixture.send(nvml("GPU-dp-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        fixture.send(nvml("GPU-dp-0", HealthStatus.UNHEALTHY, T0.plusSeconds(2)).setReason("XID-79").setMessage("XID 79"));

        HealthTransition failure = fixture.transitions.readValuesToList().get(1);
        assertThat(failure.getAffectedPods()).extracting(p -> p.getName()).containsExactly("infer-0");
        PodDeviceStatus status = lastPodStatus();
        assertThat(status.getSummary()).isEqualTo(HealthStatus.UNHEALTHY);
        DevicePluginResourceStatus resource = status.getContainers().get(0).getDevicePluginResources().get(0);
        assertThat(resource.getResourceName()).isEqualTo("nvidia.com/gpu");
        assertThat(resource.getDevices()).singleElement().satisfies(d -> {
            assertThat(d.getResourceId()).isEqualTo("GPU-dp-0");
            assertThat(d.getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
            assertThat(d.getReason()).isEqualTo("XID-79");
            assertThat(d.getMessage()).isEqualTo("XID 79");
            assertThat(d.getSince()).isEqualTo(T0.plusSeconds(2));
        });

        fixture.send(nvml("GPU-dp-0", HealthStatus.HEALTHY, T0.plusSeconds(3)));
        PodDeviceStatus recovered = lastPodStatus();
        assertThat(recovered.getSummary()).isEqualTo(HealthStatus.HEALTHY);
        assertThat(recovered.getContainers().get(0).getDevicePluginResources().get(0).getDevices().get(0).getHealth())
                .isEqualTo(HealthStatus.HEALTHY);
    }

    @Test
    void shouldGiveADevicePluginPodTheMergedHealthOfTheDraDeviceWithItsUuid() {
        fixture.inventory("gpu-0");
        fixture.allocateDevicePlugin("infer-0", "nvidia.com/gpu", uuid("gpu-0"), "GPU-never-reported");
        fixture.send(nvml(uuid("gpu-0"), HealthStatus.HEALTHY, T0.plusSeconds(1)));
        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(2)).setReason("ECC").setMessage("DBE"));

        PodDeviceStatus status = lastPodStatus();
        assertThat(status.getSummary()).as("the DRA driver's Unhealthy wins over NVML's Healthy").isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(status.getContainers().get(0).getDevicePluginResources().get(0).getDevices())
                .as("an id no source knows is left out, not shown Unknown")
                .singleElement().satisfies(d -> {
                    assertThat(d.getResourceId()).isEqualTo(uuid("gpu-0"));
                    assertThat(d.getDevice().getDevice()).isEqualTo("gpu-0");
                    assertThat(d.getReason()).isEqualTo("ECC");
                });
    }

    /** NVIDIA's DRA driver reports health only as taints; a device-plugin pod on the same GPU gets it through the UUID. */
    @Test
    void shouldGiveADevicePluginPodTheTaintSourcesHealthOfTheDraDeviceWithItsUuid() {
        fixture.inventory("gpu-0");
        fixture.allocateDevicePlugin("infer-0", "nvidia.com/gpu", uuid("gpu-0"));
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)).setSource(SourceKind.TAINT));
        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(2)).setSource(SourceKind.TAINT)
                .setMessage("XID 79 reported by the driver (gpu.nvidia.com/xid, NoSchedule)"));

        PodDeviceStatus status = lastPodStatus();
        assertThat(status.getSummary()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(status.getContainers().get(0).getDevicePluginResources().get(0).getDevices()).singleElement()
                .satisfies(d -> {
                    assertThat(d.getResourceId()).isEqualTo(uuid("gpu-0"));
                    assertThat(d.getMessage()).contains("XID 79 reported by the driver");
                });
    }

    /** Nothing is known of a pod whose only devices no source reports: no status, rather than Healthy with no device. */
    @Test
    void shouldEmitNoStatusForADevicePluginPodUntilASourceReportsOneOfItsDevices() {
        fixture.allocateDevicePlugin("rdma-0", "rdma/hca", "mlx5_0");
        fixture.allocateDevicePlugin("infer-0", "nvidia.com/gpu", "GPU-dp-0");
        fixture.send(nvml("GPU-other", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        fixture.driver.advanceWallClockTime(Duration.ofSeconds(5));

        assertThat(fixture.podStatus.readValuesToList()).as("no pod shows a device yet").isEmpty();

        fixture.send(nvml("GPU-dp-0", HealthStatus.HEALTHY, T0.plusSeconds(2)));
        assertThat(fixture.podStatus.readValuesToList()).singleElement().satisfies(status -> {
            assertThat(status.getPod().getName()).isEqualTo("infer-0");
            assertThat(status.getSummary()).isEqualTo(HealthStatus.HEALTHY);
        });
    }
}
