package io.devhealth.collector.realkube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.collector.CollectorConfig;
import io.devhealth.collector.NodeCollector;
import io.devhealth.collector.RecordingPublisher;
import io.devhealth.collector.nvml.NvmlConfig;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.DraDriverControl.Taint;
import io.devhealth.simulators.realkube.KubeBinaries;
import io.devhealth.testkit.realkube.RealKubernetes;
import io.devhealth.simulators.realkube.RealNode;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceTaintRule;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceTaintRuleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.InputStream;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Device taints as a health source, on the real API server: the test driver taints its slice's devices
 * as NVIDIA's DRA driver does, an administrator adds and removes a DeviceTaintRule, and the collector —
 * reading as the ServiceAccount the shipped {@code k8s/base/node-collector/rbac.yaml} binds — reports each
 * change, and each removal as a recovery, as source TAINT.
 */
@RealKubernetes
class RealDeviceTaintsIT {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String COLLECTOR_NAMESPACE = "devhealth-node";

    private final RecordingPublisher publisher = new RecordingPublisher();
    private KubernetesClient admin;
    private RealNode node;
    private NodeCollector collector;

    @BeforeEach
    void start(ControlPlane plane, RealNode realNode) throws Exception {
        admin = plane.adminClient();
        node = realNode;
        // The collector's own namespace and ServiceAccount, which the shipped binding names.
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(COLLECTOR_NAMESPACE).endMetadata().build())
                .serverSideApply();
        admin.serviceAccounts().inNamespace(COLLECTOR_NAMESPACE).resource(new io.fabric8.kubernetes.api.model.ServiceAccountBuilder()
                .withNewMetadata().withName("node-collector").endMetadata().build()).serverSideApply();
        try (InputStream rbac = Files.newInputStream(KubeBinaries.repositoryRoot().resolve("k8s/base/node-collector/rbac.yaml"))) {
            admin.load(rbac).forceConflicts().serverSideApply();
        }
        KubernetesClient asCollector = plane.clientFor(COLLECTOR_NAMESPACE, "node-collector");
        collector = new NodeCollector(new CollectorConfig(Map.ofEntries(
                Map.entry(CollectorConfig.NODE_NAME, node.name()),
                Map.entry(CollectorConfig.BOOTSTRAP_SERVERS, "unused:9092"),
                Map.entry(CollectorConfig.SCHEMA_REGISTRY_URL, "mem://unused"),
                Map.entry(CollectorConfig.DRA_DISCOVERY_ENABLED, "false"),
                Map.entry(CollectorConfig.POD_RESOURCES_SOCKET, node.podResourcesSocket().toString()),
                Map.entry(CollectorConfig.HEARTBEAT_INTERVAL, "60000"),
                Map.entry(CollectorConfig.TAINTS_TIMEOUT, "6000"),
                Map.entry(NvmlConfig.ENABLED, "false"))), publisher, Clock.systemUTC()).withInventory(asCollector);
        collector.start();
        for (int i = 0; i < node.gpus(); i++) {
            String gpu = "gpu-" + i;
            await("the first taint report of " + gpu).atMost(WAIT).until(() -> last(gpu).isPresent());
            assertThat(last(gpu).orElseThrow().getHealth()).isEqualTo(HealthStatus.HEALTHY);
        }
    }

    @AfterEach
    void stop() {
        if (collector != null) {
            collector.close();
        }
        for (int i = 0; i < node.gpus(); i++) {
            node.driver().setTaints("gpu-" + i, List.of());
        }
        admin.resources(DeviceTaintRule.class).delete();
    }

    @Test
    void shouldReportTheDriversTaintsAndTheirRemovalAsTheTaintSource() {
        node.driver().setTaints("gpu-1", List.of(new Taint("gpu.nvidia.com/xid", "79", "NoSchedule")));
        awaitHealth("gpu-1", HealthStatus.UNHEALTHY, "XID 79 reported by the driver (gpu.nvidia.com/xid, NoSchedule)");
        DeviceHealthReport report = last("gpu-1").orElseThrow();
        assertThat(report.getSource()).isEqualTo(SourceKind.TAINT);
        assertThat(report.getSourceName()).isEqualTo(RealNode.DRIVER_NAME);
        assertThat(report.getDevice().getPool()).isEqualTo(node.name());

        node.driver().setTaints("gpu-1", List.of(new Taint("gpu.nvidia.com/xid", "43", "None")));
        awaitHealth("gpu-1", HealthStatus.HEALTHY, "XID 43 reported by the driver, not fatal (gpu.nvidia.com/xid, None)");

        node.driver().setTaints("gpu-1", List.of());
        await("the recovery once the taint is gone").atMost(WAIT).until(() -> last("gpu-1")
                .filter(r -> r.getHealth() == HealthStatus.HEALTHY && r.getMessage() == null).isPresent());
        assertThat(last("gpu-0").orElseThrow().getHealth()).as("an untainted neighbour").isEqualTo(HealthStatus.HEALTHY);
    }

    @Test
    void shouldReportADeviceTaintRuleThatSelectsTheDeviceAndItsDeletionAsARecovery() {
        admin.resource(new DeviceTaintRuleBuilder()
                .withNewMetadata().withName("drain-gpu-2").endMetadata()
                .withNewSpec()
                        .withNewDeviceSelector().withDriver(RealNode.DRIVER_NAME).withPool(node.name()).withDevice("gpu-2").endDeviceSelector()
                        .withNewTaint().withKey("admin.example.com/maintenance").withValue("rma").withEffect("NoExecute").endTaint()
                .endSpec().build()).create();
        awaitHealth("gpu-2", HealthStatus.UNHEALTHY, "tainted admin.example.com/maintenance=rma:NoExecute");
        assertThat(last("gpu-3").orElseThrow().getHealth()).as("a device the rule does not select").isEqualTo(HealthStatus.HEALTHY);

        admin.resources(DeviceTaintRule.class).withName("drain-gpu-2").delete();
        await("the recovery once the rule is deleted").atMost(WAIT).until(() -> last("gpu-2")
                .filter(r -> r.getHealth() == HealthStatus.HEALTHY).isPresent());
    }

    @Test
    void shouldKeepTheTaintViewFreshWithKeepAlivesWithinItsTimeout() {
        long before = publisher.reportsFor("gpu-0").size();
        await("a keep-alive of an unchanged device").atMost(WAIT)
                .until(() -> publisher.reportsFor("gpu-0").size() > before);
        DeviceHealthReport keepAlive = last("gpu-0").orElseThrow();
        assertThat(keepAlive.getKind()).isEqualTo(io.devhealth.schema.avro.ReportKind.KEEPALIVE);
        assertThat(keepAlive.getTimeoutSeconds()).isEqualTo(6L);
    }

    private void awaitHealth(String device, HealthStatus health, String message) {
        await(device + " " + health).atMost(WAIT).untilAsserted(() -> {
            DeviceHealthReport report = last(device).orElseThrow();
            assertThat(report.getHealth()).isEqualTo(health);
            assertThat(report.getMessage()).isEqualTo(message);
        });
    }

    /** The latest TAINT report of {@code device}. */
    private Optional<DeviceHealthReport> last(String device) {
        List<DeviceHealthReport> reports = publisher.reportsFor(device).stream()
                .filter(r -> r.getSource() == SourceKind.TAINT).toList();
        return reports.isEmpty() ? Optional.empty() : Optional.of(reports.get(reports.size() - 1));
    }
}
