package io.devhealth.testkit.realkube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.simulators.kube.FleetKubernetesApi;
import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.KubeBinaries;
import io.devhealth.simulators.realkube.Kubectl;
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
    /** Where the Events for the field-selector cases are. */
    private static final String SELECTORS = "event-selectors";
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
                        "health", "Unhealthy", "verdict", "DeviceFailure", "finishedAt", FINISHED.toString(), "frozen", true,
                        "message", "gpu-0 Unhealthy since the job died: XID 79"))
                .build();
        client.genericKubernetesResources("devhealth.io/v1alpha1", "DevicePostMortem").inNamespace(NAMESPACE).resource(record).create();

        // Events for the field-selector cases, in a namespace of their own: two pods, and a claim named
        // as one of them (a kind selector then matters), with different reasons, types and sources.
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(SELECTORS).endMetadata().build()).create();
        event(client, "job-a.backoff", "Pod", "v1", "job-a", "uid-a", "Warning", "BackOff", "kubelet", null);
        event(client, "job-a.started", "Pod", "v1", "job-a", "uid-a", "Normal", "Started", "kubelet", null);
        event(client, "job-a.unhealthy", "Pod", "v1", "job-a", "uid-a", "Warning", "DeviceUnhealthy", null, "devhealth-sink");
        event(client, "job-b.backoff", "Pod", "v1", "job-b", "uid-b", "Warning", "BackOff", "kubelet", null);
        event(client, "job-b.pulled", "Pod", "v1", "job-b", "uid-b", "Normal", "Pulled", "kubelet", null);
        event(client, "claim-a.allocated", "ResourceClaim", "resource.k8s.io/v1", "job-a", "uid-c", "Normal", "Allocated",
                "devhealth-sink", null);
    }

    /** An Event on {@code kind/name} in {@link #SELECTORS}, from {@code source} (old style) or {@code reportingComponent}. */
    private static void event(KubernetesClient client, String name, String kind, String apiVersion, String object, String uid,
                              String type, String reason, String source, String reportingComponent) {
        EventBuilder event = new EventBuilder().withNewMetadata().withName(name).endMetadata()
                .withNewInvolvedObject().withKind(kind).withApiVersion(apiVersion).withNamespace(SELECTORS).withName(object).withUid(uid)
                .withFieldPath("Pod".equals(kind) ? "spec.containers{main}" : null).withResourceVersion("Pod".equals(kind) ? null : "42")
                .endInvolvedObject()
                .withType(type).withReason(reason).withMessage(reason + " of " + object)
                .withFirstTimestamp(FINISHED.toString()).withLastTimestamp(FINISHED.toString()).withCount(1);
        if (source != null) {
            event.withNewSource().withComponent(source).endSource();
        }
        client.v1().events().inNamespace(SELECTORS).resource(event.withReportingComponent(reportingComponent).build()).create();
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

    /** Which Events a field selector picks: the API server's Event fields, {@code =}, {@code ==} and {@code !=}, terms joined. */
    @ParameterizedTest(name = "kubectl get events --field-selector {0}")
    @ValueSource(strings = {"involvedObject.name=job-a", "involvedObject.name=job-a,reason=BackOff", "type=Warning", "type==Normal",
        "involvedObject.kind=Pod,involvedObject.name=job-a", "involvedObject.kind!=Pod", "reason!=BackOff,type=Warning",
        "involvedObject.uid=uid-b", "involvedObject.apiVersion=resource.k8s.io/v1", "involvedObject.resourceVersion=42",
        "involvedObject.fieldPath=spec.containers{main},reason=Started", "involvedObject.namespace=" + SELECTORS,
        "metadata.name=job-b.pulled", "metadata.namespace=" + SELECTORS, "source=devhealth-sink", "source=kubelet,type=Normal",
        "reportingComponent=devhealth-sink"})
    void shouldSelectTheEventsTheRealApiServerSelects(String selector) {
        String[] args = {"get", "events", "-n", SELECTORS, "-o", "wide", "--field-selector", selector};

        List<List<String>> real = rows(Kubectl.admin(plane).ok(args));
        List<List<String>> ours = rows(Kubectl.against(plane, embedded.url(), home).ok(args));

        assertThat(real).as("kube-apiserver selected Events").hasSizeGreaterThan(1);
        assertThat(ours).as("the Events the embedded API selects for %s, as kube-apiserver", selector).isEqualTo(real);
    }

    @org.junit.jupiter.api.Test
    void shouldRefuseAFieldEventsDoNotHave() {
        String[] args = {"get", "events", "-n", SELECTORS, "--field-selector", "spec.nodeName=x"};

        Kubectl.Result real = Kubectl.admin(plane).run(args);
        Kubectl.Result ours = Kubectl.against(plane, embedded.url(), home).run(args);

        assertThat(real.exitCode()).as(real.output()).isNotZero();
        assertThat(real.output()).contains("field label not supported: spec.nodeName");
        assertThat(ours.exitCode()).as(ours.output()).isNotZero();
        assertThat(ours.output()).contains("field label not supported: spec.nodeName");
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
