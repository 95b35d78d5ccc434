package io.devhealth.schema.serde;

import io.devhealth.schema.avro.ClaimAllocation;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.ClaimDeviceStatus;
import io.devhealth.schema.avro.ContainerAllocation;
import io.devhealth.schema.avro.ContainerDeviceStatus;
import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DevicePluginAllocation;
import io.devhealth.schema.avro.DevicePluginResourceStatus;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.DeviceStatus;
import io.devhealth.schema.avro.FleetStats;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.InventoryDevice;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeDevices;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.avro.NodeHeartbeat;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.PodRef;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.Severity;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.avro.SourceState;
import io.devhealth.schema.avro.SourceStatus;
import io.devhealth.schema.avro.StatsDimension;
import io.devhealth.schema.avro.TerminatedContainer;
import io.devhealth.schema.avro.TerminatedDevice;
import io.devhealth.schema.avro.TerminatedPod;
import io.devhealth.schema.avro.Verdict;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.specific.SpecificRecord;

/** One fully populated sample of every top-level record type, for round-trip tests. */
final class SampleRecords {

    static final Instant T0 = Instant.parse("2026-11-29T10:15:30.123Z");

    private SampleRecords() {
    }

    static DeviceRef gpu0() {
        return DeviceRef.newBuilder().setDriver("gpu.nvidia.com").setPool("node-a").setDevice("gpu-0")
                .setUuid("GPU-5f0c2d1e-0000-1111-2222-333344445555").setMigGpuInstanceId(null)
                .setMigComputeInstanceId(null).build();
    }

    static PodRef pod() {
        return PodRef.newBuilder().setNamespace("ml").setName("train-0").setUid("7c1e0b7a-uid").build();
    }

    static DeviceHealthReport deviceHealthReport() {
        return DeviceHealthReport.newBuilder().setCluster("prod-eu").setNode("node-a").setSource(SourceKind.DRA)
                .setSourceName("gpu.nvidia.com").setDevice(gpu0()).setHealth(HealthStatus.UNHEALTHY)
                .setKind(ReportKind.CHANGE).setMessage("XID 79: GPU has fallen off the bus").setReason("XID-79")
                .setObservedAt(T0).setTimeoutSeconds(60L).setCollectorEpoch(1_732_875_330L).setSequence(42L).build();
    }

    static NodeHeartbeat nodeHeartbeat() {
        return NodeHeartbeat.newBuilder().setCluster("prod-eu").setNode("node-a").setObservedAt(T0)
                .setSources(List.of(SourceState.newBuilder().setSource(SourceKind.NVML).setSourceName("nvml")
                        .setState(SourceStatus.UP).setSince(T0.minusSeconds(3600)).setMessage(null).build()))
                .setCollectorEpoch(1_732_875_330L).setSequence(43L).build();
    }

    static NodeEvent eventWithReport() {
        return new NodeEvent(deviceHealthReport());
    }

    static NodeEvent eventWithHeartbeat() {
        return new NodeEvent(nodeHeartbeat());
    }

    /** One node event per union branch. */
    static List<NodeEvent> nodeEvents() {
        return List.of(new NodeEvent(deviceHealthReport()), new NodeEvent(nodeHeartbeat()), new NodeEvent(nodeAllocations()),
                new NodeEvent(nodeDevices()));
    }

    static NodeAllocations nodeAllocations() {
        ClaimDevice device = ClaimDevice.newBuilder().setDriver("gpu.nvidia.com").setPool("node-a").setDevice("gpu-0")
                .setCdiIds(List.of("k8s.gpu.nvidia.com/device=gpu-0")).setShareId("share-1").build();
        ClaimAllocation claim = ClaimAllocation.newBuilder().setClaimName("train-0-gpu").setClaimNamespace("ml")
                .setDevices(List.of(device)).build();
        DevicePluginAllocation plugin = DevicePluginAllocation.newBuilder().setResourceName("nvidia.com/gpu")
                .setDeviceIds(List.of("GPU-1")).build();
        ContainerAllocation container = ContainerAllocation.newBuilder().setName("main").setClaims(List.of(claim))
                .setDevicePluginResources(List.of(plugin)).build();
        PodAllocation pod = PodAllocation.newBuilder().setNamespace("ml").setName("train-0")
                .setContainers(List.of(container)).build();
        return NodeAllocations.newBuilder().setCluster("prod-eu").setNode("node-a").setObservedAt(T0)
                .setCollectorEpoch(7L).setSequence(8L).setPods(List.of(pod)).build();
    }

    static NodeDevices nodeDevices() {
        return NodeDevices.newBuilder().setCluster("prod-eu").setNode("node-a").setObservedAt(T0)
                .setDevices(List.of(InventoryDevice.newBuilder().setDriver("gpu.nvidia.com").setPool("node-a")
                        .setDevice("gpu-0").setUuid("GPU-5f0c").setProductName("NVIDIA H200").build()))
                .build();
    }

    static PodDeviceStatus podDeviceStatus() {
        DeviceStatus status = DeviceStatus.newBuilder().setDevice(gpu0())
                .setResourceId("k8s.gpu.nvidia.com/device=gpu-0").setHealth(HealthStatus.UNHEALTHY)
                .setMessage("XID 79").setReason("XID-79").setSince(T0).setProduct("NVIDIA H200").build();
        ClaimDeviceStatus claim = ClaimDeviceStatus.newBuilder().setClaimName("train-0-gpu").setClaimNamespace("ml")
                .setDevices(List.of(status)).build();
        DevicePluginResourceStatus plugin = DevicePluginResourceStatus.newBuilder().setResourceName("nvidia.com/gpu")
                .setDevices(List.of(status)).build();
        ContainerDeviceStatus container = ContainerDeviceStatus.newBuilder().setName("main").setClaims(List.of(claim))
                .setDevicePluginResources(List.of(plugin)).build();
        return PodDeviceStatus.newBuilder().setPod(pod()).setCluster("prod-eu").setNode("node-a").setVersion(3L)
                .setUpdatedAt(T0).setSummary(HealthStatus.UNHEALTHY).setContainers(List.of(container)).build();
    }

    static TerminatedPod terminatedPod() {
        TerminatedDevice device = TerminatedDevice.newBuilder().setDevice(gpu0()).setResourceId("k8s.gpu.nvidia.com/device=gpu-0")
                .setHealth(HealthStatus.UNHEALTHY).setMessage("XID 79").setReason("XID-79").setSince(T0).setProduct("NVIDIA H200").build();
        return TerminatedPod.newBuilder().setId("3f1c").setPod(pod()).setNode("node-a").setPhase("Failed").setFinishedAt(T0)
                .setVerdict(Verdict.DEVICE_FAILURE).setHealth(HealthStatus.UNHEALTHY).setMessage("gpu-0 Unhealthy: XID 79")
                .setContainers(List.of(TerminatedContainer.newBuilder().setName("main").setExitCode(1).setExitReason("Error")
                        .setDevices(List.of(device)).build()))
                .setRecordedAt(T0.plusSeconds(120)).build();
    }

    static HealthTransition healthTransition() {
        return HealthTransition.newBuilder().setId("node-a/gpu.nvidia.com/node-a/gpu-0@42").setCluster("prod-eu")
                .setNode("node-a").setDevice(gpu0()).setFrom(HealthStatus.HEALTHY).setTo(HealthStatus.UNHEALTHY)
                .setSource(SourceKind.NVML).setReason("XID-79").setMessage("fell off the bus")
                .setAffectedPods(List.of(pod())).setAt(T0).setSeverity(Severity.CRITICAL).build();
    }

    static FleetStats fleetStats() {
        return FleetStats.newBuilder().setCluster("prod-eu").setWindowStart(T0).setWindowEnd(T0.plusSeconds(300))
                .setDimension(StatsDimension.PRODUCT).setKey("NVIDIA H200").setToUnhealthy(2).setToUnknown(1)
                .setToHealthy(5).build();
    }

    static DeadLetter deadLetter() {
        return DeadLetter.newBuilder().setStage("processor").setSourceTopic("devhealth.node-events")
                .setSourcePartition(3).setSourceOffset(1234L)
                .setKey(ByteBuffer.wrap("node-a".getBytes(StandardCharsets.UTF_8)))
                .setValue(ByteBuffer.wrap(new byte[] {0x01, 0x02, 0x03})).setReason("bad magic byte")
                .setErrorClass("org.apache.kafka.common.errors.SerializationException").setFailedAt(T0).build();
    }

    /** One sample per top-level record type (node events once per union branch). */
    static List<SpecificRecord> allTopLevel() {
        List<SpecificRecord> samples = new ArrayList<>(nodeEvents());
        samples.addAll(List.of(deviceHealthReport(), nodeHeartbeat(),
                nodeAllocations(), nodeDevices(), podDeviceStatus(), healthTransition(), terminatedPod(), fleetStats(), deadLetter()));
        return samples;
    }
}
