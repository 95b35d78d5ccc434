package io.devhealth.cli.realkube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.KubeBinaries;
import io.devhealth.simulators.realkube.Kubectl;
import io.devhealth.testkit.realkube.RealKubernetes;
import io.devhealth.simulators.realkube.RealNode;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.node.v1.RuntimeClassBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * {@code kubectl apply -k k8s/}, as an operator runs it, against the real API server: the server-side
 * dry run admits every object (validation, RBAC escalation checks, PodSecurity admission of the
 * namespace), the real apply creates them, and the controllers and scheduler act on them.
 *
 * <p>What the harness cannot run: the images (the fake runtime starts no process), the collector's
 * hostPath mounts (this kubelet's root is not {@code /var/lib/kubelet}), the NVIDIA runtime and the
 * processor's volume (no storage provisioner). So the collector's pod is only shown scheduled onto the
 * GPU node and the processor's only created; the sink's is shown refused by the GPU node (its required
 * node affinity) and running once the node is no GPU node; PodSecurity admission of each pod template in
 * its namespace is shown by server-side dry runs.
 */
@RealKubernetes
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ShippedManifestsIT {

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final String NAMESPACE = "devhealth";
    private static final String COLLECTOR_NAMESPACE = "devhealth-node";
    /** The label the collector's DaemonSet selects GPU nodes by, and the processor and the sink avoid. */
    private static final String GPU_NODE_LABEL = "devhealth.io/gpu-node";
    private static ControlPlane plane;
    private static Kubectl kubectl;
    private static KubernetesClient client;

    @BeforeAll
    static void prepare(ControlPlane controlPlane, RealNode node) {
        plane = controlPlane;
        kubectl = Kubectl.admin(plane);
        client = plane.adminClient();
        // The monitoring types come from the Prometheus Operator, which a cluster that uses them has
        // installed; here schemaless stand-ins of the same group, version and kinds take their place.
        for (String kind : List.of("PodMonitor", "PrometheusRule")) {
            String plural = kind.toLowerCase(java.util.Locale.ROOT) + "s";
            client.apiextensions().v1().customResourceDefinitions().resource(new CustomResourceDefinitionBuilder()
                    .withNewMetadata().withName(plural + ".monitoring.coreos.com").endMetadata()
                    .withNewSpec().withGroup("monitoring.coreos.com").withScope("Namespaced")
                            .withNewNames().withKind(kind).withPlural(plural).withSingular(kind.toLowerCase(java.util.Locale.ROOT)).endNames()
                            .addNewVersion().withName("v1").withServed(true).withStorage(true)
                                    .withNewSchema().withNewOpenAPIV3Schema().withType("object")
                                            .withXKubernetesPreserveUnknownFields(true).endOpenAPIV3Schema().endSchema()
                            .endVersion()
                    .endSpec().build()).serverSideApply();
        }
        await().atMost(WAIT).until(() -> kubectl.run("get", "podmonitors,prometheusrules", "-A").exitCode() == 0);
        // The NVIDIA GPU operator creates this RuntimeClass, which the collector's pods name; without it the
        // RuntimeClass admission plugin refuses them. The fake runtime ignores the handler.
        client.resource(new RuntimeClassBuilder().withNewMetadata().withName("nvidia").endMetadata().withHandler("nvidia").build())
                .serverSideApply();
        client.nodes().withName(node.name()).edit(n -> new NodeBuilder(n).editMetadata()
                .addToLabels(GPU_NODE_LABEL, "true").endMetadata().build());
    }

    @Test
    @Order(1)
    void shouldPassTheServerSideDryRun() {
        // A dry run creates nothing, so every namespaced object of it is refused with "namespaces
        // devhealth not found" until the namespaces exist: they are applied first, as an operator would,
        // with their PodSecurity labels, which the dry run's admission then checks the pods against.
        for (String file : List.of("k8s/base/namespace.yaml", "k8s/base/node-collector/namespace.yaml")) {
            Kubectl.Result namespace = kubectl.run("apply", "--server-side", "-f", KubeBinaries.repositoryRoot().resolve(file).toString());
            assertThat(namespace.exitCode()).as(namespace.output()).isZero();
        }
        Kubectl.Result result = kubectl.run("apply", "-k", k8s(), "--server-side", "--dry-run=server");
        assertThat(result.exitCode()).as(result.output()).isZero();
        assertThat(result.output()).contains("daemonset.apps/node-collector serverside-applied (server dry run)",
                "statefulset.apps/stream-processor serverside-applied (server dry run)",
                "deployment.apps/sink-apiserver serverside-applied (server dry run)",
                "clusterrole.rbac.authorization.k8s.io/devhealth-sink serverside-applied (server dry run)");
        assertThat(client.apps().daemonSets().inNamespace(COLLECTOR_NAMESPACE).withName("node-collector").get())
                .as("nothing is created by a dry run").isNull();
    }

    @Test
    @Order(2)
    void shouldApplyAndHaveTheControllersAndSchedulerActOnIt(RealNode node) {
        // The Secrets a cluster has before devhealth starts: Strimzi's user Secrets and cluster CA
        // (k8s/components/strimzi), the registry's CA and read-only credentials. Without them the kubelet
        // refuses to start the containers that name them (CreateContainerConfigError).
        for (String user : List.of("devhealth-collector", "devhealth-processor", "devhealth-sink")) {
            secret(user, Map.of("sasl.jaas.config", "placeholder", "password", "placeholder"));
        }
        secret("kafka-cluster-ca-cert", Map.of("ca.crt", "placeholder"));
        secret("devhealth-schema-registry", Map.of("ca.crt", "placeholder", "user-info", "reader:placeholder"));
        Kubectl.Result result = kubectl.run("apply", "-k", k8s(), "--server-side");
        assertThat(result.exitCode()).as(result.output()).isZero();

        await("the DevicePostMortem CRD is established").atMost(WAIT).until(() -> client.apiextensions().v1()
                .customResourceDefinitions().withName("devicepostmortems.devhealth.io").get().getStatus().getConditions().stream()
                .anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus())));
        await("the collector's DaemonSet pod is placed on the GPU node").atMost(WAIT).untilAsserted(() ->
                assertThat(pods(COLLECTOR_NAMESPACE, "node-collector")).singleElement()
                        .satisfies(p -> assertThat(p.getSpec().getNodeName()).isEqualTo(node.name())));
        // The only node is a GPU node: the scheduler keeps the sink off it by its required node affinity.
        await("the sink's pods refused by the GPU node").atMost(WAIT).untilAsserted(() -> assertThat(pods("sink-apiserver"))
                .isNotEmpty().allSatisfy(p -> {
                    assertThat(p.getSpec().getNodeName()).isNull();
                    assertThat(p.getStatus().getConditions()).anySatisfy(c -> {
                        assertThat(c.getType()).isEqualTo("PodScheduled");
                        assertThat(c.getReason()).isEqualTo("Unschedulable");
                        assertThat(c.getMessage()).contains("didn't match Pod's node affinity/selector");
                    });
                }));
        await("the processor's StatefulSet pod and its volume claim exist").atMost(WAIT).untilAsserted(() -> {
            assertThat(pods("stream-processor")).isNotEmpty().allSatisfy(p -> assertThat(p.getSpec().getNodeName()).isNull());
            assertThat(client.persistentVolumeClaims().inNamespace("devhealth").list().getItems()).isNotEmpty();
        });

        // No longer a GPU node: the sink runs there (its Secrets exist). This also leaves the shared node as it was.
        client.nodes().withName(node.name()).edit(n -> new NodeBuilder(n).editMetadata().removeFromLabels(GPU_NODE_LABEL).endMetadata().build());
        await("the sink's pod runs on the node").atMost(WAIT).untilAsserted(() -> assertThat(pods("sink-apiserver"))
                .anySatisfy(p -> {
                    assertThat(p.getSpec().getNodeName()).isEqualTo(node.name());
                    assertThat(p.getStatus().getPhase()).isEqualTo("Running");
                }));
    }

    private static void secret(String name, Map<String, String> data) {
        client.secrets().inNamespace("devhealth").resource(new SecretBuilder().withNewMetadata().withName(name).endMetadata()
                .withStringData(data).build()).serverSideApply();
    }

    @Test
    @Order(3)
    void shouldHavePodSecurityAdmitEachWorkloadInItsNamespaceAndRefuseTheCollectorInDevhealth() {
        Map<String, PodTemplateSpec> templates = Map.of(
                COLLECTOR_NAMESPACE, client.apps().daemonSets().inNamespace(COLLECTOR_NAMESPACE).withName("node-collector").get()
                        .getSpec().getTemplate(),
                NAMESPACE + "/stream-processor", withClaims(client.apps().statefulSets().inNamespace(NAMESPACE)
                        .withName("stream-processor").get()),
                NAMESPACE + "/sink-apiserver", client.apps().deployments().inNamespace(NAMESPACE).withName("sink-apiserver").get()
                        .getSpec().getTemplate());
        templates.forEach((where, template) -> {
            String namespace = where.split("/")[0];
            // A server-side dry run passes every admission step, PodSecurity's "enforce" of the namespace included.
            Pod admitted = client.pods().inNamespace(namespace).resource(podOf(template, "psa-check")).dryRun().create();
            assertThat(admitted.getMetadata().getNamespace()).as(where).isEqualTo(namespace);
        });
        assertThat(client.pods().inNamespace(NAMESPACE).withName("psa-check").get()).as("a dry run creates nothing").isNull();

        // The collector's pod (hostPath, root) in devhealth, which enforces "restricted": refused. Its
        // ServiceAccount exists only in devhealth-node, and that lookup (an earlier admission step) would
        // refuse it first, so this one runs as devhealth's default account.
        Pod collectorLike = podOf(templates.get(COLLECTOR_NAMESPACE), "collector-like");
        collectorLike.getSpec().setServiceAccountName("default");
        assertThatThrownBy(() -> client.pods().inNamespace(NAMESPACE).resource(collectorLike).dryRun().create())
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(403);
                    assertThat(e.getMessage()).contains("violates PodSecurity \"restricted:latest\"").contains("use restricted volume type \"hostPath\"")
                            .contains("runAsNonRoot != true").contains("runAsUser=0");
                });
    }

    /** The template as the StatefulSet controller makes pods of it: a claim volume per volume claim template. */
    private static PodTemplateSpec withClaims(io.fabric8.kubernetes.api.model.apps.StatefulSet set) {
        PodTemplateSpec template = set.getSpec().getTemplate();
        set.getSpec().getVolumeClaimTemplates().forEach(claim -> template.getSpec().getVolumes().add(new io.fabric8.kubernetes.api.model.VolumeBuilder()
                .withName(claim.getMetadata().getName()).withNewPersistentVolumeClaim()
                .withClaimName(claim.getMetadata().getName() + "-" + set.getMetadata().getName() + "-0").endPersistentVolumeClaim().build()));
        return template;
    }

    private static Pod podOf(PodTemplateSpec template, String name) {
        return new PodBuilder().withNewMetadata().withName(name).withLabels(template.getMetadata().getLabels()).endMetadata()
                .withSpec(template.getSpec()).build();
    }

    private static List<Pod> pods(String name) {
        return pods(NAMESPACE, name);
    }

    private static List<Pod> pods(String namespace, String name) {
        return client.pods().inNamespace(namespace).withLabel("app.kubernetes.io/name", name).list().getItems();
    }

    private static String k8s() {
        return KubeBinaries.repositoryRoot().resolve("k8s").toString();
    }
}
