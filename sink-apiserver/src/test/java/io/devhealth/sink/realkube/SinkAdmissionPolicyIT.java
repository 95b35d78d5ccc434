package io.devhealth.sink.realkube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.GpuWorkloads;
import io.devhealth.simulators.realkube.RealNode;
import io.devhealth.simulators.realkube.ShippedManifests;
import io.devhealth.sink.ApiErrorClass;
import io.devhealth.sink.SinkConfig;
import io.devhealth.sink.condition.PodStatusWriter;
import io.devhealth.testkit.realkube.RealKubernetes;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The shipped {@code ValidatingAdmissionPolicy} for the sink, on the real API server: acting as the
 * sink's ServiceAccount (bound by the shipped RBAC), a pods/status write of anything but devhealth's own
 * conditions is refused with the policy's message, the sink's own writes ({@link PodStatusWriter}, on a
 * running and then a terminated pod) pass, and the kubelet's status updates are not touched by it.
 *
 * <p>Without the policy the shipped RBAC lets the sink change labels through pods/status: the setup
 * shows that first, so the test also fails if the API server ever stops taking metadata on a status
 * write and the policy's metadata check becomes moot.
 */
@RealKubernetes
class SinkAdmissionPolicyIT {

    private static final String NAMESPACE = "sink-policy";
    private static final String POLICY = "devhealth-sink-pod-status";
    private static final String EVENTS_POLICY = "devhealth-sink-events";
    private static final Path POLICY_FILE = Path.of("k8s/base/sink-apiserver/admissionpolicy.yaml");
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String REFUSED = "ValidatingAdmissionPolicy '" + POLICY + "' with binding '" + POLICY + "' denied request: "
            + "devhealth-sink may change only pod conditions of type devhealth.io/*";

    private static KubernetesClient admin;
    private static KubernetesClient sink;

    @BeforeAll
    static void applyShippedRbacCrdAndPolicy(ControlPlane plane, RealNode node) throws Exception {
        admin = plane.adminClient();
        ShippedManifests.applySinkIdentity(admin);
        sink = plane.clientFor("devhealth", "devhealth-sink");
        GpuWorkloads.prepare(admin, NAMESPACE);
        GpuWorkloads.claimTemplate(admin, NAMESPACE, "one-gpu", 1);
        GpuWorkloads.batchPod(admin, NAMESPACE, "target", "one-gpu");
        await().atMost(WAIT).until(() -> "Running".equals(pod("target").getStatus().getPhase()));

        // RBAC alone: pods/status patch takes the pod's labels too.
        sinkPatch("target", "[{\"op\":\"add\",\"path\":\"/metadata/labels/hijacked\",\"value\":\"by-sink\"}]");
        assertThat(pod("target").getMetadata().getLabels()).as("a label written through pods/status without the policy")
                .containsEntry("hijacked", "by-sink");
        sinkPatch("target", "[{\"op\":\"remove\",\"path\":\"/metadata/labels/hijacked\"}]");

        // RBAC alone: events create takes an Event about any object.
        sink.v1().events().resource(event("Node", "devhealth-node-1", "NodeNotReady", "kubelet")).create();

        ShippedManifests.apply(admin, POLICY_FILE.toString());
        // Policies are loaded asynchronously: wait until the probes are refused by them.
        await("the policy refuses a probe write").atMost(WAIT).pollInterval(Duration.ofMillis(500)).until(() -> {
            try {
                probe();
                return false;
            } catch (KubernetesClientException e) {
                return e.getCode() == 403 && String.valueOf(e.getMessage()).contains(REFUSED);
            }
        });
        await("the events policy refuses a probe Event").atMost(WAIT).pollInterval(Duration.ofMillis(500)).until(() -> {
            try {
                sink.v1().events().resource(event("Node", "devhealth-node-1", "NodeNotReady", "kubelet")).create();
                return false;
            } catch (KubernetesClientException e) {
                return e.getCode() == 403 && String.valueOf(e.getMessage()).contains(EVENTS_POLICY);
            }
        });
    }

    /**
     * An Event about {@code kind}/{@code name}: in the test namespace for a namespaced object, in
     * {@code default} for a Node (the API server wants an Event's namespace to be its object's, and
     * cluster-scoped objects' Events in default, as the kubelet posts its node's).
     */
    private static io.fabric8.kubernetes.api.model.Event event(String kind, String name, String reason, String component) {
        boolean clusterScoped = "Node".equals(kind);
        return new io.fabric8.kubernetes.api.model.EventBuilder()
                .withNewMetadata().withNamespace(clusterScoped ? "default" : NAMESPACE).withName(name + "." + Long.toHexString(System.nanoTime()))
                        .endMetadata()
                .withNewInvolvedObject().withApiVersion("v1").withKind(kind).withNamespace(clusterScoped ? null : NAMESPACE)
                        .withName(name).endInvolvedObject()
                .withType("Warning").withReason(reason).withMessage("probe")
                .withNewSource().withComponent(component).endSource()
                .withReportingComponent("devhealth-sink".equals(component) ? "devhealth.io/sink" : component)
                .withReportingInstance("probe")
                .build();
    }

    /** The control plane is shared by the module's tests: take the policy away and wait until it no longer applies. */
    @AfterAll
    static void removePolicy() {
        if (admin == null) {
            return;
        }
        admin.resources(ValidatingAdmissionPolicyBinding.class).withName(EVENTS_POLICY).delete();
        admin.resources(ValidatingAdmissionPolicy.class).withName(EVENTS_POLICY).delete();
        admin.resources(ValidatingAdmissionPolicyBinding.class).withName(POLICY).delete();
        admin.resources(ValidatingAdmissionPolicy.class).withName(POLICY).delete();
        await("the policy no longer applies").atMost(WAIT).pollInterval(Duration.ofMillis(500)).until(() -> {
            try {
                probe();
                return true;
            } catch (KubernetesClientException e) {
                return false;
            }
        });
        admin.pods().inNamespace(NAMESPACE).withGracePeriod(0).delete();
    }

    /** The API server checks the expressions against the Pod schema it serves and reports what does not fit. */
    @Test
    void shouldTypeCheckAgainstThePodAndEventSchemasWithoutWarnings() {
        for (String name : List.of(POLICY, EVENTS_POLICY)) {
            await(name + "'s type check").atMost(WAIT).until(() -> {
                ValidatingAdmissionPolicy policy = admin.resources(ValidatingAdmissionPolicy.class).withName(name).get();
                return policy.getStatus() != null && policy.getStatus().getTypeChecking() != null;
            });
            // The type check also runs the expressions against events.k8s.io/v1 Event, the other API of the same
            // objects, whose fields are named otherwise; the policy matches core v1 Events only (matchPolicy
            // Exact), so those warnings are about requests it never evaluates.
            assertThat(admin.resources(ValidatingAdmissionPolicy.class).withName(name).get().getStatus().getTypeChecking()
                    .getExpressionWarnings()).as(name)
                    .filteredOn(w -> !w.getWarning().startsWith("events.k8s.io/v1, Kind=Event:"))
                    .isEmpty();
        }
    }

    @Test
    void shouldRefuseTheSinkSettingTheReadyCondition() {
        Pod before = pod("target");
        int ready = conditionIndex(before, "Ready");
        assertThat(before.getStatus().getConditions().get(ready).getStatus()).isEqualTo("True");

        KubernetesClientException refused = refusal("[{\"op\":\"test\",\"path\":\"/status/conditions/" + ready + "/type\",\"value\":\"Ready\"},"
                + "{\"op\":\"replace\",\"path\":\"/status/conditions/" + ready + "/status\",\"value\":\"False\"}]");

        assertThat(refused.getCode()).isEqualTo(403);
        assertThat(refused.getMessage()).contains(REFUSED, "another condition");
        assertThat(ApiErrorClass.of(refused)).as("stops the sink rather than retrying as a conflict").isEqualTo(ApiErrorClass.UNREACHABLE);
        assertThat(pod("target").getStatus().getConditions().get(ready).getStatus()).isEqualTo("True");
    }

    @Test
    void shouldRefuseTheSinkRemovingOrAddingAnotherWritersCondition() {
        int scheduled = conditionIndex(pod("target"), "PodScheduled");

        assertThat(refusal("[{\"op\":\"remove\",\"path\":\"/status/conditions/" + scheduled + "\"}]").getMessage())
                .contains(REFUSED, "another condition");
        assertThat(refusal("[{\"op\":\"add\",\"path\":\"/status/conditions/-\",\"value\":"
                + "{\"type\":\"example.com/Maintenance\",\"status\":\"True\"}}]").getMessage())
                .contains(REFUSED, "another condition");
        assertThat(pod("target").getStatus().getConditions()).extracting(PodCondition::getType)
                .contains("PodScheduled").doesNotContain("example.com/Maintenance");
    }

    @Test
    void shouldRefuseTheSinkChangingAnyOtherStatusField() {
        Pod before = pod("target");
        boolean ready = before.getStatus().getContainerStatuses().get(0).getReady();

        // A valid address passes the API server's own validation: only the policy stands in the way.
        assertThat(refusal("[{\"op\":\"add\",\"path\":\"/status/podIP\",\"value\":\"10.99.99.99\"},"
                + "{\"op\":\"add\",\"path\":\"/status/podIPs\",\"value\":[{\"ip\":\"10.99.99.99\"}]}]").getMessage())
                .contains(REFUSED, "status fields: ").contains("podIP", "podIPs");
        assertThat(refusal("[{\"op\":\"replace\",\"path\":\"/status/phase\",\"value\":\"Succeeded\"}]").getMessage())
                .contains(REFUSED, "status fields: phase");
        assertThat(refusal("[{\"op\":\"replace\",\"path\":\"/status/containerStatuses/0/ready\",\"value\":" + !ready + "}]").getMessage())
                .contains(REFUSED, "status fields: containerStatuses");
        assertThat(refusal("[{\"op\":\"add\",\"path\":\"/status/message\",\"value\":\"evicted\"}]").getMessage())
                .contains(REFUSED, "status fields: message");
        assertThat(pod("target").getStatus()).isEqualTo(before.getStatus());
    }

    @Test
    void shouldRefuseTheSinkChangingTheLabelsAnnotationsOrFinalizersOfAPod() {
        assertThat(refusal("[{\"op\":\"add\",\"path\":\"/metadata/labels/app\",\"value\":\"payments\"}]").getMessage())
                .contains(REFUSED, "metadata fields: labels");
        assertThat(refusal("[{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{\"owner\":\"sink\"}}]").getMessage())
                .contains(REFUSED, "metadata fields: annotations");
        assertThat(refusal("[{\"op\":\"add\",\"path\":\"/metadata/finalizers\",\"value\":[\"example.com/hold\"]}]").getMessage())
                .contains(REFUSED, "metadata fields: finalizers");
        assertThat(pod("target").getMetadata().getLabels()).containsEntry("app", "devhealth-test");
        assertThat(pod("target").getMetadata().getFinalizers()).isNullOrEmpty();
    }

    /**
     * The sink's own writes on the real kubelet: its condition on a running pod, the post-mortem on the
     * terminated pod, and the final condition once the window has passed; meanwhile the kubelet reports
     * the container's exit and the pod's phase through the same pods/status, unhindered.
     */
    @Test
    void shouldLetTheSinksOwnWritesAndTheKubeletsStatusUpdatesThrough(RealNode node) {
        GpuWorkloads.batchPod(admin, NAMESPACE, "written", "one-gpu");
        await().atMost(WAIT).until(() -> "Running".equals(pod("written").getStatus().getPhase()));
        ResourceClaim claim = claimOf("written");
        String device = claim.getStatus().getAllocation().getDevices().getResults().get(0).getDevice();
        PodStatusWriter writer = PodStatusWriter.builder(sink, Clock.systemUTC()).build();
        Instant t0 = Instant.now();

        assertThat(writer.write(status(node, "written", claim, device, HealthStatus.HEALTHY, null, t0, 1)))
                .isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        assertThat(writer.write(status(node, "written", claim, device, HealthStatus.UNHEALTHY, "XID 79", t0, 2)))
                .isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        assertThat(condition(pod("written"), PodStatusWriter.CONDITION_TYPE)).extracting(PodCondition::getStatus).isEqualTo("False");

        node.runtime().exit(NAMESPACE, "written", "main", 1, "CUDA error");
        await("the kubelet's status update").atMost(WAIT).until(() -> "Failed".equals(pod("written").getStatus().getPhase()));
        assertThat(pod("written").getStatus().getContainerStatuses().get(0).getState().getTerminated().getExitCode()).isEqualTo(1);
        assertThat(writer.write(status(node, "written", claim, device, HealthStatus.UNHEALTHY, "XID 79", t0, 3)))
                .isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        assertThat(writer.record(NAMESPACE, "written")).isPresent();

        PodStatusWriter afterTheWindow = PodStatusWriter.builder(sink,
                Clock.offset(Clock.systemUTC(), SinkConfig.DEFAULT_TERMINATION_WINDOW.plusMinutes(1))).build();
        PodStatusWriter.Result frozen = afterTheWindow.freeze(NAMESPACE, "written", List.of(), null);
        assertThat(frozen.outcome()).isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        assertThat(condition(pod("written"), PodStatusWriter.FINAL_CONDITION_TYPE)).extracting(PodCondition::getStatus).isEqualTo("True");
        assertThat(condition(pod("written"), PodStatusWriter.CONDITION_TYPE)).extracting(PodCondition::getStatus).isEqualTo("False");
    }

    /**
     * RBAC's {@code events create} would let a stolen sink token post an Event about any object with any
     * reason (shown before the policy was applied); the policy holds it to devhealth's own Events.
     */
    @Test
    void shouldRefuseTheSinkPostingEventsAboutOtherObjectsWithOtherReasonsOrAsAnotherComponent() {
        for (io.fabric8.kubernetes.api.model.Event hostile : List.of(
                event("Node", "devhealth-node-1", "NodeNotReady", "kubelet"),
                event("Secret", "credentials", "DeviceUnhealthy", "devhealth-sink"),
                event("Pod", "target", "Killing", "devhealth-sink"),
                event("Pod", "target", "DeviceUnhealthy", "kubelet"))) {
            assertThatThrownBy(() -> sink.v1().events().resource(hostile).create())
                    .as(hostile.getInvolvedObject().getKind() + " " + hostile.getReason() + " " + hostile.getSource().getComponent())
                    .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                        assertThat(e.getCode()).isEqualTo(403);
                        assertThat(e.getMessage()).contains("ValidatingAdmissionPolicy '" + EVENTS_POLICY + "'");
                    });
        }
        // The Events PodEventRecorder writes pass (RealNodePipelineIT counts the real sink's through this policy).
        sink.v1().events().inNamespace(NAMESPACE).resource(event("Pod", "target", "DeviceUnhealthy", "devhealth-sink")).create();
        sink.v1().events().inNamespace(NAMESPACE).resource(event("Pod", "target", "DevicePostMortemRecorded", "devhealth-sink")).create();
        // Other users are not evaluated.
        admin.v1().events().resource(event("Node", "devhealth-node-1", "NodeNotReady", "kubelet")).create();
    }

    @Test
    void shouldNotEvaluateOtherUsersWrites() {
        Map<String, String> labels = pod("target").getMetadata().getLabels();
        admin.pods().inNamespace(NAMESPACE).withName("target").subresource("status").patch(PatchContext.of(PatchType.JSON),
                "[{\"op\":\"add\",\"path\":\"/metadata/labels/admin\",\"value\":\"was-here\"}]");
        assertThat(pod("target").getMetadata().getLabels()).containsEntry("admin", "was-here").containsAllEntriesOf(labels);
        admin.pods().inNamespace(NAMESPACE).withName("target").subresource("status").patch(PatchContext.of(PatchType.JSON),
                "[{\"op\":\"remove\",\"path\":\"/metadata/labels/admin\"}]");
    }

    /** A change of metadata through pods/status: a new value each time, so that it is never a no-op the policy would let pass. */
    private static void probe() {
        sinkPatch("target", "[{\"op\":\"add\",\"path\":\"/metadata/labels/probe\",\"value\":\"p" + System.nanoTime() + "\"}]");
    }

    private static KubernetesClientException refusal(String jsonPatch) {
        try {
            sinkPatch("target", jsonPatch);
        } catch (KubernetesClientException e) {
            return e;
        }
        throw new AssertionError("the sink's patch was accepted: " + jsonPatch);
    }

    private static void sinkPatch(String pod, String jsonPatch) {
        sink.pods().inNamespace(NAMESPACE).withName(pod).subresource("status").patch(PatchContext.of(PatchType.JSON), jsonPatch);
    }

    private static int conditionIndex(Pod pod, String type) {
        List<PodCondition> conditions = pod.getStatus().getConditions();
        for (int i = 0; i < conditions.size(); i++) {
            if (type.equals(conditions.get(i).getType())) {
                return i;
            }
        }
        throw new AssertionError("no condition " + type + " in " + conditions);
    }

    private static PodCondition condition(Pod pod, String type) {
        return pod.getStatus().getConditions().stream().filter(c -> type.equals(c.getType())).findFirst().orElse(null);
    }

    private static ResourceClaim claimOf(String pod) {
        return RealPodStatuses.claimOf(admin, NAMESPACE, pod);
    }

    private static PodDeviceStatus status(RealNode node, String pod, ResourceClaim claim, String device, HealthStatus health,
                                          String message, Instant since, long version) {
        return RealPodStatuses.status(node, NAMESPACE, pod, claim, device, health, message, since, version);
    }

    private static Pod pod(String name) {
        return admin.pods().inNamespace(NAMESPACE).withName(name).get();
    }
}
