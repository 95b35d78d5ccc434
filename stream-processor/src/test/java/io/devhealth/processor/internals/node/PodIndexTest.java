package io.devhealth.processor.internals.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.processor.internals.stores.StateKeys;
import io.devhealth.schema.avro.ClaimAllocation;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.ContainerAllocation;
import io.devhealth.schema.avro.DevicePluginAllocation;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.PodAllocation;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class PodIndexTest {

    private static PodAllocation draPod(String name, String... devices) {
        List<ClaimDevice> claimed = java.util.Arrays.stream(devices)
                .map(d -> ClaimDevice.newBuilder().setDriver("gpu.example").setPool("pool").setDevice(d).build()).toList();
        return new PodAllocation("ns", name, List.of(ContainerAllocation.newBuilder().setName("main")
                .setClaims(List.of(new ClaimAllocation(name + "-claim", "ns", claimed))).build()));
    }

    private static PodAllocation pluginPod(String name, String uuid) {
        return new PodAllocation("ns", name, List.of(ContainerAllocation.newBuilder().setName("main")
                .setDevicePluginResources(List.of(new DevicePluginAllocation("nvidia.com/gpu", List.of(uuid)))).build()));
    }

    private static NodeAllocations snapshot(PodAllocation... pods) {
        return NodeAllocations.newBuilder().setNode("n1").setObservedAt(Instant.EPOCH).setPods(List.of(pods)).build();
    }

    @Test
    void shouldFindExactlyThePodsOfADeviceInSnapshotOrder() {
        NodeAllocations allocations = snapshot(draPod("a", "gpu-0", "gpu-1"), pluginPod("b", "GPU-1111"), draPod("c", "gpu-1"),
                draPod("d", "gpu-2"));
        PodIndex index = new PodIndex("n1", allocations);
        String gpu1 = StateKeys.device("n1", "gpu.example", "pool", "gpu-1");

        assertThat(index.podsUsing(gpu1, null)).extracting(PodAllocation::getName).containsExactly("a", "c");
        assertThat(index.podsUsing(gpu1, "GPU-1111")).as("DRA identity and its UUID (a device-plugin pod)")
                .extracting(PodAllocation::getName).containsExactly("a", "b", "c");
        assertThat(index.podsUsing(null, "GPU-1111")).extracting(PodAllocation::getName).containsExactly("b");
        assertThat(index.podsUsing(StateKeys.device("n1", "gpu.example", "pool", "gpu-9"), "GPU-none")).isEmpty();
        assertThat(index.podsUsing(StateKeys.device("n2", "gpu.example", "pool", "gpu-1"), null)).as("another node's device").isEmpty();
    }

    @Test
    void shouldBeValidOnlyForTheSnapshotItWasBuiltFrom() {
        NodeAllocations first = snapshot(draPod("a", "gpu-0"));
        PodIndex index = new PodIndex("n1", first);
        assertThat(index.isFor(first)).isTrue();
        assertThat(index.isFor(snapshot(draPod("a", "gpu-0")))).as("an equal but newer snapshot is a new one").isFalse();
    }
}
