package io.devhealth.collector.inventory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.collector.RecordingPublisher;
import io.devhealth.schema.avro.InventoryDevice;
import io.devhealth.schema.avro.NodeDevices;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class ResourceSliceInventoryTest {

    private static final String DRIVER = "gpu.nvidia.com";

    KubernetesClient client;
    KubernetesMockServer server;

    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final RecordingPublisher publisher = new RecordingPublisher();

    @AfterEach
    void tearDown() {
        scheduler.shutdownNow();
    }

    static ResourceSlice slice(String name, String node, String pool, long generation, String... devices) {
        ResourceSliceBuilder builder = new ResourceSliceBuilder()
                .withNewMetadata().withName(name).endMetadata()
                .withNewSpec().withDriver(DRIVER).withNodeName(node)
                .withNewPool().withName(pool).withGeneration(generation).withResourceSliceCount(1L).endPool()
                .endSpec();
        for (String device : devices) {
            builder.editSpec().addNewDevice().withName(device).withAttributes(Map.of(
                    "uuid", new DeviceAttributeBuilder().withString("GPU-" + device).build(),
                    "productName", new DeviceAttributeBuilder().withString("NVIDIA H200").build(),
                    "index", new DeviceAttributeBuilder().withInt(0L).build())).endDevice().endSpec();
        }
        return builder.build();
    }

    private List<InventoryDevice> lastInventory() {
        List<NodeDevices> all = publisher.inventories();
        return all.isEmpty() ? List.of() : all.get(all.size() - 1).getDevices();
    }

    @Test
    void shouldPublishThisNodesDevicesWithUuidAndProductAndFollowChanges() {
        client.resources(ResourceSlice.class).resource(slice("a-gpus", "node-a", "node-a", 1, "gpu-0", "gpu-1")).create();
        client.resources(ResourceSlice.class).resource(slice("b-gpus", "node-b", "node-b", 1, "gpu-0")).create();

        try (ResourceSliceInventory inventory = new ResourceSliceInventory(client, "c1", "node-a", publisher, Clock.systemUTC(),
                scheduler, Duration.ofMinutes(10), false)) {
            inventory.start();

            await().atMost(Duration.ofSeconds(20)).until(() -> lastInventory().size() == 2);
            NodeDevices published = publisher.inventories().get(publisher.inventories().size() - 1);
            assertThat(published.getNode()).isEqualTo("node-a");
            assertThat(published.getCluster()).isEqualTo("c1");
            assertThat(lastInventory().get(0)).isEqualTo(InventoryDevice.newBuilder().setDriver(DRIVER).setPool("node-a")
                    .setDevice("gpu-0").setUuid("GPU-gpu-0").setProductName("NVIDIA H200").build());
            int publications = publisher.inventories().size();

            client.resources(ResourceSlice.class).resource(slice("a-gpus", "node-a", "node-a", 2, "gpu-0", "gpu-1", "gpu-2"))
                    .update();
            await().atMost(Duration.ofSeconds(20)).until(() -> lastInventory().size() == 3);

            client.resources(ResourceSlice.class).withName("a-gpus").delete();
            await().atMost(Duration.ofSeconds(20)).until(() -> lastInventory().isEmpty());
            assertThat(publisher.inventories().size()).isGreaterThan(publications);
        }
    }

    @Test
    void shouldAskTheApiServerForThisNodesSlicesOnly() throws Exception {
        try (ResourceSliceInventory inventory = new ResourceSliceInventory(client, "", "node-a", publisher, Clock.systemUTC(),
                scheduler, Duration.ofMinutes(10))) {
            inventory.start();
            await().atMost(Duration.ofSeconds(20)).until(inventory::synced);

            assertThat(server.getLastRequest().getPath()).contains("fieldSelector=spec.nodeName%3Dnode-a");
        }
    }

    @Test
    void shouldNotRepublishAnUnchangedInventoryBeforeTheResendInterval() throws Exception {
        client.resources(ResourceSlice.class).resource(slice("a-gpus", "node-a", "node-a", 1, "gpu-0")).create();
        try (ResourceSliceInventory inventory = new ResourceSliceInventory(client, "", "node-a", publisher, Clock.systemUTC(),
                scheduler, Duration.ofMinutes(10), false)) {
            inventory.start();
            await().atMost(Duration.ofSeconds(20)).until(() -> publisher.inventories().size() == 1);

            // A slice of another node changes: this node's inventory does not.
            client.resources(ResourceSlice.class).resource(slice("b-gpus", "node-b", "node-b", 1, "gpu-9")).create();
            Thread.sleep(1_000);

            assertThat(publisher.inventories()).hasSize(1);
        }
    }
}
