package io.devhealth.collector.realkube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.collector.CollectorConfig;
import io.devhealth.collector.NodeCollector;
import io.devhealth.collector.RecordingPublisher;
import io.devhealth.collector.nvml.NvmlConfig;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.SourceStatus;
import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.GpuWorkloads;
import io.devhealth.testkit.realkube.RealKubernetes;
import io.devhealth.simulators.realkube.RealNode;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The collector on a real node: it finds the DRA driver through the real kubelet's plugin registry
 * (the driver is built on upstream's kubeletplugin library and speaks grpc-go), streams its health
 * beside the kubelet's own stream, and reads pod → claim → device allocations from the kubelet's own
 * PodResources socket.
 */
@RealKubernetes
class RealKubeletCollectorIT {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String NAMESPACE = "collector";

    private final RecordingPublisher publisher = new RecordingPublisher();
    private NodeCollector collector;

    @AfterEach
    void stop() {
        if (collector != null) {
            collector.close();
        }
    }

    @Test
    void shouldStreamTheRealDriversHealthAndReadTheRealKubeletsAllocations(ControlPlane plane, RealNode node) {
        KubernetesClient client = plane.adminClient();
        GpuWorkloads.prepare(client, NAMESPACE);
        GpuWorkloads.claimTemplate(client, NAMESPACE, "one-gpu", 1);
        GpuWorkloads.batchPod(client, NAMESPACE, "train-0", "one-gpu");
        await().atMost(WAIT).until(() -> "Running".equals(client.pods().inNamespace(NAMESPACE).withName("train-0").get()
                .getStatus().getPhase()));
        ResourceClaim claim = client.resources(ResourceClaim.class).inNamespace(NAMESPACE).list().getItems().get(0);
        String device = claim.getStatus().getAllocation().getDevices().getResults().get(0).getDevice();

        collector = new NodeCollector(new CollectorConfig(Map.ofEntries(
                Map.entry(CollectorConfig.NODE_NAME, node.name()),
                Map.entry(CollectorConfig.BOOTSTRAP_SERVERS, "unused:9092"),
                Map.entry(CollectorConfig.SCHEMA_REGISTRY_URL, "mem://unused"),
                Map.entry(CollectorConfig.DRA_REGISTRY_DIR, node.pluginRegistryDirectory().toString()),
                Map.entry(CollectorConfig.DRA_PLUGINS_DIR, node.pluginsDirectory().toString()),
                Map.entry(CollectorConfig.DRA_REGISTRY_RESCAN_INTERVAL, "500"),
                Map.entry(CollectorConfig.POD_RESOURCES_SOCKET, node.podResourcesSocket().toString()),
                Map.entry(CollectorConfig.POD_RESOURCES_POLL_INTERVAL, "500"),
                Map.entry(CollectorConfig.HEARTBEAT_INTERVAL, "60000"),
                Map.entry(NvmlConfig.ENABLED, "false"))), publisher, Clock.systemUTC());
        collector.start();

        await("the driver's health stream is up").atMost(WAIT)
                .until(() -> publisher.lastSourceState(RealNode.DRIVER_NAME).map(s -> s.getState()).orElse(null) == SourceStatus.UP);
        for (int i = 0; i < node.gpus(); i++) {
            String gpu = "gpu-" + i;
            await("a report of " + gpu).atMost(WAIT).until(() -> lastReport(gpu).isPresent());
            assertThat(lastReport(gpu).orElseThrow().getDevice().getPool()).isEqualTo(node.name());
        }

        await("the pod's claim in a PodResources snapshot").atMost(WAIT).until(() -> !publisher.claimedDevices().isEmpty());
        assertThat(publisher.claimedDevices()).contains(NAMESPACE + "/train-0/" + claim.getMetadata().getName() + " -> "
                + RealNode.DRIVER_NAME + "/" + node.name() + "/" + device);

        node.driver().setHealth(device, "Unhealthy", "XID 79: GPU has fallen off the bus");
        try {
            await("the driver's Unhealthy report").atMost(WAIT).untilAsserted(() -> {
                DeviceHealthReport report = lastReport(device).orElseThrow();
                assertThat(report.getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
                assertThat(report.getMessage()).isEqualTo("XID 79: GPU has fallen off the bus");
                assertThat(report.getSourceName()).isEqualTo(RealNode.DRIVER_NAME);
            });
        } finally {
            node.driver().setHealth(device, "Healthy", "");
        }
        await("the recovery").atMost(WAIT).until(() -> lastReport(device).orElseThrow().getHealth() == HealthStatus.HEALTHY);
    }

    private Optional<DeviceHealthReport> lastReport(String device) {
        List<DeviceHealthReport> reports = publisher.reportsFor(device);
        return reports.isEmpty() ? Optional.empty() : Optional.of(reports.get(reports.size() - 1));
    }

}
