package io.devhealth.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.schema.serde.SchemaRegistryClient;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

class FleetSimulationTest {

    private final Topics topics = Topics.withDefaultPrefix();
    private final SchemaRegistryClient registry = SchemaRegistries.inMemory("fleet-simulation-test");

    @Test
    void shouldGiveEachGpuItsOwnPodUnlessSaid() {
        List<PodAllocation> pods = podsOfFirstNode(new FleetSimulation(16, 8, 0.0));

        assertThat(pods).hasSize(8);
        assertThat(pods).allSatisfy(pod -> assertThat(devicesOf(pod)).hasSize(1));
    }

    @Test
    void shouldPutANodesEightGpusInOnePod() {
        List<PodAllocation> pods = podsOfFirstNode(new FleetSimulation(16, 8, 8, 0.0));

        assertThat(pods).singleElement().satisfies(pod -> assertThat(devicesOf(pod)).extracting(ClaimDevice::getDevice)
                .containsExactly("gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5", "gpu-6", "gpu-7"));
    }

    @Test
    void shouldRefusePodsThatDoNotDivideANode() {
        assertThatThrownBy(() -> new FleetSimulation(16, 8, 3, 0.0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("devices per pod").hasMessageContaining("3");
    }

    private List<PodAllocation> podsOfFirstNode(FleetSimulation fleet) {
        ProducerRecord<String, byte[]> first = fleet.allocations(topics, registry).get(0);
        NodeEvent event = AvroSerde.of(NodeEvent.class, registry).deserializer().deserialize(topics.nodeEvents(), first.value());
        return ((NodeAllocations) event.getPayload()).getPods();
    }

    private static List<ClaimDevice> devicesOf(PodAllocation pod) {
        return pod.getContainers().stream().flatMap(container -> container.getClaims().stream())
                .flatMap(claim -> claim.getDevices().stream()).toList();
    }
}
