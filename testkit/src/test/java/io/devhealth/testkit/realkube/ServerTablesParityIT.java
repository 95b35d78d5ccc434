package io.devhealth.testkit.realkube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.simulators.kube.FleetKubernetesApi;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The embedded API's server-side tables ({@code FleetKubernetesApi}, which {@code devhealth demo} runs)
 * against a real kube-apiserver's: the same pods (running, failed with an exit code, completed,
 * pending, being created), Events and DevicePostMortem, created in both, must print the same
 * {@code kubectl get} output — columns and cells, ages aside — with the kubectl built with the
 * control plane. What a user sees in the demo is then what a cluster would show them.
 */
@RealKubernetes
class ServerTablesParityIT {

    private static final String NAMESPACE = "tables";
    private static final String NODE = "tables-node";
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** An age cell: 5s, 2m3s, 4h, 3d2h… (ages differ between the two servers by the seconds between the creations). */
    private static final Pattern AGE = Pattern.compile("\\d+[smhdy](\\d+[smhd])?");
    private static final Instant FINISHED = Instant.now().minus(3, ChronoUnit.MINUTES).truncatedTo(ChronoUnit.SECONDS);

    private static ControlPlane plane;
    private static FleetKubernetesApi embedded;
    private static Path home;

    @BeforeAll
    static void createTheSameObjectsInBoth(ControlPlane controlPlane) throws Exception {
        plane = controlPlane;
        embedded = FleetKubernetesApi.start();
        home = Files.createTempDirectory("dh-tables");
        for (KubernetesClient client : List.of(plane.adminClient(), embedded.client())) {
            populate(client);
        }
    }

    @AfterAll
    static void stop() {
        if (embedded != null) {
            embedded.close();
        }
    }

    private static void populate(KubernetesClient client) throws IOException {
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build()).create();
        // A node object, so that the real control plane does not collect the pods bound to it as orphans.
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build()).create();
        try (InputStream crd = Files.newInputStream(KubeBinaries.repositoryRoot().resolve("k8s/base/sink-apiserver/devicepostmortem-crd.yaml"))) {
            client.apiextensions().v1().customResourceDefinitions()
                    .resource(client.getKubernetesSerialization().unmarshal(crd, CustomResourceDefinition.class)).create();
        }
        await("CRD served").atMost(WAIT).ignoreExceptions().until(() -> client.genericKubernetesResources("devhealth.io/v1alpha1",
                "DevicePostMortem").inNamespace(NAMESPACE).list() != null);

        Instant started = FINISHED.minus(10, ChronoUnit.MINUTES);
        pod(client, "train-running", "Running", List.of(condition("Ready", "True")),
                container("main", true).withNewState().withNewRunning().withStartedAt(started.toString()).endRunning().endState()
                        .withRestartCount(2).withNewLastState().withNewTerminated().withExitCode(1).withReason("Error")
                        .withFinishedAt(FINISHED.toString()).endTerminated().endLastState());
        pod(client, "train-failed", "Failed", List.of(condition("Ready", "False")),
                container("main", false).withNewState().withNewTerminated().withExitCode(1).withReason("Error")
                        .withStartedAt(started.toString()).withFinishedAt(FINISHED.toString()).endTerminated().endState());
        pod(client, "train-killed", "Failed", List.of(),
                container("main", false).withNewState().withNewTerminated().withExitCode(137).withSignal(9)
                        .withFinishedAt(FINISHED.toString()).endTerminated().endState());
        pod(client, "train-done", "Succeeded", List.of(),
                container("main", false).withNewState().withNewTerminated().withExitCode(0).withReason("Completed")
                        .withFinishedAt(FINISHED.toString()).endTerminated().endState());
        pod(client, "train-creating", "Pending", List.of(),
                container("main", false).withNewState().withNewWaiting().withReason("ContainerCreating").endWaiting().endState());

        client.v1().events().inNamespace(NAMESPACE).resource(new EventBuilder()
                .withNewMetadata().withName("train-failed.devhealth").endMetadata()
                .withNewInvolvedObject().withKind("Pod").withNamespace(NAMESPACE).withName("train-failed").withApiVersion("v1")
                .withFieldPath("spec.containers{main}").endInvolvedObject()
                .withType("Warning").withReason("DeviceUnhealthy").withMessage("gpu-0 Unhealthy: XID 79, GPU has fallen off the bus ")
                .withFirstTimestamp(FINISHED.toString()).withLastTimestamp(FINISHED.toString()).withCount(3)
                .withNewSource().withComponent("devhealth-sink").withHost(NODE).endSource()
                .build()).create();

        GenericKubernetesResource record = new GenericKubernetesResourceBuilder().withApiVersion("devhealth.io/v1alpha1")
                .withKind("DevicePostMortem").withNewMetadata().withName("train-failed").withNamespace(NAMESPACE).endMetadata()
                .addToAdditionalProperties("spec", Map.of("pod", Map.of("name", "train-failed", "uid", "uid-1"), "node", NODE,
                        "health", "Unhealthy", "finishedAt", FINISHED.toString(), "frozen", true,
                        "message", "gpu-0 Unhealthy since the job died: XID 79"))
                .build();
        client.genericKubernetesResources("devhealth.io/v1alpha1", "DevicePostMortem").inNamespace(NAMESPACE).resource(record).create();
    }

    private static PodCondition condition(String type, String status) {
        return new PodConditionBuilder().withType(type).withStatus(status).build();
    }

    private static ContainerStatusBuilder container(String name, boolean ready) {
        return new ContainerStatusBuilder().withName(name).withReady(ready).withImage("registry.k8s.io/pause:3.10").withImageID("")
                .withRestartCount(0);
    }

    private static void pod(KubernetesClient client, String name, String phase, List<PodCondition> conditions, ContainerStatusBuilder status) {
        Pod pod = new PodBuilder().withNewMetadata().withName(name).withNamespace(NAMESPACE).endMetadata()
                .withNewSpec().withNodeName(NODE).addNewContainer().withName("main").withImage("registry.k8s.io/pause:3.10").endContainer()
                .endSpec().build();
        Pod created = client.pods().inNamespace(NAMESPACE).resource(pod).create();
        ContainerStatus container = status.build();
        created.setStatus(new io.fabric8.kubernetes.api.model.PodStatusBuilder().withPhase(phase).withConditions(conditions)
                .withPodIP("10.244.0.7").addNewPodIP("10.244.0.7").withContainerStatuses(container).build());
        client.pods().inNamespace(NAMESPACE).resource(created).updateStatus();
    }

    @ParameterizedTest(name = "kubectl get {0}")
    @ValueSource(strings = {"pods", "pods -o wide", "events", "events -o wide", "devicepostmortems", "dpm -o wide"})
    void shouldPrintWhatTheRealApiServerPrints(String what) throws Exception {
        List<String> args = new ArrayList<>(List.of("get"));
        args.addAll(List.of(what.split(" ")));
        args.addAll(List.of("-n", NAMESPACE));

        List<List<String>> real = rows(Kubectl.admin(plane).ok(args.toArray(String[]::new)));
        List<List<String>> ours = rows(Kubectl.against(plane, embedded.url(), home).ok(args.toArray(String[]::new)));

        assertThat(real).as("the real API server listed the objects").hasSizeGreaterThan(1);
        assertThat(ours).as("kubectl get %s against the embedded API, as against kube-apiserver", what).isEqualTo(real);
    }

    /** What else kubectl asks of the embedded API: JSON and JSONPath output, short names, a CRD, describe's events. */
    @org.junit.jupiter.api.Test
    void shouldServeKubectlsOtherRequests() {
        Kubectl kubectl = Kubectl.against(plane, embedded.url(), home);
        assertThat(kubectl.ok("get", "pods", "-A", "-o", "json")).contains("\"name\": \"train-failed\"");
        assertThat(kubectl.ok("get", "pod", "-n", NAMESPACE, "train-failed", "-o", "jsonpath={.status.phase}")).isEqualTo("Failed");
        assertThat(kubectl.ok("get", "resourceclaims", "-A", "-o", "json")).contains("\"items\"");
        assertThat(kubectl.ok("get", "devicepostmortem", "train-failed", "-n", NAMESPACE, "-o", "jsonpath={.spec.health}"))
                .isEqualTo("Unhealthy");
        assertThat(kubectl.ok("get", "dpm", "-A", "-o", "name")).contains("devicepostmortem.devhealth.io/train-failed");
        assertThat(kubectl.ok("get", "crd", "devicepostmortems.devhealth.io", "-o", "name"))
                .contains("customresourcedefinition.apiextensions.k8s.io/devicepostmortems.devhealth.io");

        // describe asks for the pod's own events by involvedObject name, namespace and uid (in a namespace
        // of its own: the parity tests compare the Events of theirs).
        KubernetesClient client = embedded.client();
        String namespace = "describe";
        Pod pod = client.pods().inNamespace(namespace).resource(new PodBuilder().withNewMetadata().withName("job-0").endMetadata()
                .withNewSpec().addNewContainer().withName("main").withImage("registry.k8s.io/pause:3.10").endContainer().endSpec()
                .build()).create();
        for (String uid : List.of(pod.getMetadata().getUid(), "an-earlier-pod-of-that-name")) {
            client.v1().events().inNamespace(namespace).resource(new EventBuilder()
                    .withNewMetadata().withName("job-0." + uid).endMetadata().withType("Normal").withReason("ReasonOf-" + uid)
                    .withNewInvolvedObject().withKind("Pod").withNamespace(namespace).withName("job-0").withUid(uid).endInvolvedObject()
                    .build()).create();
        }
        assertThat(kubectl.ok("describe", "pod", "-n", namespace, "job-0")).as("describe lists the pod's own events only")
                .contains("ReasonOf-" + pod.getMetadata().getUid()).doesNotContain("ReasonOf-an-earlier-pod-of-that-name");
    }

    /** The output's rows as cells (ages as {@code <age>}), the header first, then the rows in order. */
    private static List<List<String>> rows(String output) {
        List<List<String>> rows = new ArrayList<>();
        for (String line : output.strip().split("\n")) {
            // Two or more spaces separate kubectl's columns; a single space sits inside a cell (a message, "2 (3m ago)").
            List<String> cells = new ArrayList<>();
            for (String cell : line.strip().split(" {2,}")) {
                cells.add(AGE.matcher(cell).replaceAll("<age>"));
            }
            rows.add(cells);
        }
        List<List<String>> body = new ArrayList<>(rows.subList(1, rows.size()));
        // The real API server lists Events by name, the embedded one by recency: compare as sorted rows.
        body.sort((a, b) -> String.join("|", a).compareTo(String.join("|", b)));
        List<List<String>> sorted = new ArrayList<>(List.of(rows.get(0)));
        sorted.addAll(body);
        return sorted;
    }
}
