package io.devhealth.collector.inventory;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.InventoryDevice;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ResourceSliceMapperTest {

    @Test
    void shouldTakeOnlyTheNewestGenerationOfAPoolAndIgnoreOtherNodes() {
        List<ResourceSlice> slices = List.of(
                ResourceSliceInventoryTest.slice("old", "node-a", "pool", 1, "gpu-0", "gpu-1"),
                ResourceSliceInventoryTest.slice("new", "node-a", "pool", 2, "gpu-0"),
                ResourceSliceInventoryTest.slice("other", "node-b", "pool", 7, "gpu-5"));

        assertThat(ResourceSliceMapper.devices("node-a", slices)).extracting(InventoryDevice::getDevice).containsExactly("gpu-0");
    }

    @Test
    void shouldReadQualifiedAttributesAndLeaveMissingOnesEmpty() {
        ResourceSlice slice = new ResourceSliceBuilder()
                .withNewMetadata().withName("s").endMetadata()
                .withNewSpec().withDriver("dra.example.com").withNodeName("node-a")
                .withNewPool().withName("p").withGeneration(1L).withResourceSliceCount(1L).endPool()
                .addNewDevice().withName("d0").withAttributes(Map.of(
                        "dra.example.com/uuid", new DeviceAttributeBuilder().withString("U-0").build())).endDevice()
                .addNewDevice().withName("d1").endDevice()
                .endSpec().build();

        List<InventoryDevice> devices = ResourceSliceMapper.devices("node-a", List.of(slice));

        assertThat(devices.get(0).getUuid()).isEqualTo("U-0");
        assertThat(devices.get(0).getProductName()).isNull();
        assertThat(devices.get(1).getUuid()).isNull();
    }
}
