package io.devhealth.sink.realkube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.PodRef;
import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.GpuWorkloads;
import io.devhealth.simulators.realkube.RealNode;
import io.devhealth.simulators.realkube.ShippedManifests;
import io.devhealth.sink.condition.PodStatusWriter;
import io.devhealth.sink.postmortem.DevicePostMortem;
import io.devhealth.testkit.realkube.RealKubernetes;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.ResourceStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sink against the real API server and kubelet, acting as the ServiceAccount that the shipped
 * {@code k8s/base/sink-apiserver/rbac.yaml} binds, with the shipped DevicePostMortem CRD: what it may
 * do, what it may not, and that what it writes lasts — its condition on the pod and its own record —
 * through the kubelet's status syncs and a kubelet restart, while the kubelet's own
 * {@code allocatedResourcesStatus} is never touched.
 */
@RealKubernetes
class SinkOnRealKubeletIT {

    private static final Logger LOGGER = LoggerFactory.getLogger(SinkOnRealKubeletIT.class);
    private static final String NAMESPACE = "sink-real";
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** The kubelet's status manager reconciles every 10 s; three periods and a margin. */
    private static final Duration THREE_SYNCS = Duration.ofSeconds(35);
    private static final String XID = "XID 79: GPU has fallen off the bus";

    private static KubernetesClient admin;
    private static KubernetesClient sink;

    @BeforeAll
    static void applyShippedCrdAndRbac(ControlPlane plane) throws Exception {
        admin = plane.adminClient();
        ShippedManifests.applySinkIdentity(admin);
        sink = plane.clientFor("devhealth", "devhealth-sink");
        GpuWorkloads.prepare(admin, NAMESPACE);
        GpuWorkloads.claimTemplate(admin, NAMESPACE, "one-gpu", 1);
    }

    @Test
    void shouldBeRefusedEverythingOutsideTheShippedRole(RealNode node) {
        GpuWorkloads.batchPod(admin, NAMESPACE, "guarded", "one-gpu");
        await().atMost(WAIT).until(() -> "Running".equals(pod("guarded").getStatus().getPhase()));

        assertThat(sink.pods().inNamespace(NAMESPACE).withName("guarded").get()).as("pods get is granted").isNotNull();
        assertThat(sink.resources(DevicePostMortem.class).inNamespace(NAMESPACE).list()).as("list of its own records is granted").isNotNull();
        assertForbidden(() -> sink.pods().inNamespace(NAMESPACE).withName("guarded")
                .edit(p -> new PodBuilder(p).editMetadata().addToLabels("owned", "by-sink").endMetadata().build()));
        assertForbidden(() -> sink.pods().inNamespace(NAMESPACE).withName("guarded").delete());
        assertForbidden(() -> sink.pods().inNamespace(NAMESPACE).withName("guarded").updateStatus(pod("guarded")));
        assertForbidden(() -> sink.configMaps().inNamespace(NAMESPACE).list());
        assertForbidden(() -> sink.resources(ResourceClaim.class).inNamespace(NAMESPACE).list());
        assertThat(pod("guarded").getMetadata().getLabels()).doesNotContainKey("owned");
    }

    /**
     * The real API server answers a failed JSON Patch {@code test} and content it refuses both with
     * 422; the sink must take the first for a conflict (re-read, retry) and only the second for a
     * rejection (dead letter).
     */
    @Test
    void shouldTellAFailedPatchTestFromContentTheServerRefuses(RealNode node) {
        GpuWorkloads.batchPod(admin, NAMESPACE, "patched", "one-gpu");
        await().atMost(WAIT).until(() -> "Running".equals(pod("patched").getStatus().getPhase()));
        String stale = "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"1\"},"
                + "{\"op\":\"add\",\"path\":\"/status/conditions/-\",\"value\":{\"type\":\"devhealth.io/Probe\",\"status\":\"True\"}}]";
        // ValidatePodStatusUpdate checks pod IPs (pkg/apis/core/validation/validation.go, validatePodIPs).
        String refused = "[{\"op\":\"add\",\"path\":\"/status/podIP\",\"value\":\"not-an-ip\"},"
                + "{\"op\":\"add\",\"path\":\"/status/podIPs\",\"value\":[{\"ip\":\"not-an-ip\"}]}]";

        KubernetesClientException conflict = patchFailure(stale);
        KubernetesClientException rejected = patchFailure(refused);

        assertThat(conflict.getCode()).isEqualTo(422);
        assertThat(io.devhealth.sink.ApiErrorClass.of(conflict)).as(conflict.getMessage()).isEqualTo(io.devhealth.sink.ApiErrorClass.CONFLICT);
        assertThat(rejected.getCode()).isEqualTo(422);
        assertThat(io.devhealth.sink.ApiErrorClass.of(rejected)).as(rejected.getMessage()).isEqualTo(io.devhealth.sink.ApiErrorClass.INVALID);
    }

    private static KubernetesClientException patchFailure(String jsonPatch) {
        try {
            sink.pods().inNamespace(NAMESPACE).withName("patched").subresource("status")
                    .patch(io.fabric8.kubernetes.client.dsl.base.PatchContext.of(io.fabric8.kubernetes.client.dsl.base.PatchType.JSON), jsonPatch);
        } catch (KubernetesClientException e) {
            return e;
        }
        throw new AssertionError("the patch was accepted: " + jsonPatch);
    }

    /**
     * The regression test of the design: on a running pod devhealth writes only its condition, which
     * follows health changes, and the kubelet's {@code allocatedResourcesStatus} stays exactly as the
     * kubelet wrote it; on the terminated pod the record and the condition outlast three kubelet syncs.
     */
    @Test
    void shouldLeaveTheKubeletsAllocatedResourcesStatusAloneAndKeepItsConditionAndRecordThroughKubeletSyncs(RealNode node) {
        GpuWorkloads.batchPod(admin, NAMESPACE, "live", "one-gpu");
        await().atMost(WAIT).until(() -> "Running".equals(pod("live").getStatus().getPhase()));
        ResourceClaim claim = claimOf("live");
        String device = claim.getStatus().getAllocation().getDevices().getResults().get(0).getDevice();
        await("the kubelet's own allocatedResourcesStatus").atMost(WAIT).until(() -> kubeletEntries(pod("live")) != null);
        List<ResourceStatus> kubelets = kubeletEntries(pod("live"));
        PodStatusWriter writer = PodStatusWriter.builder(sink, Clock.systemUTC()).build();

        Instant t0 = Instant.now();
        assertThat(writer.write(status(node, pod("live"), claim, device, HealthStatus.HEALTHY, null, t0, 1)))
                .isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        assertThat(condition(pod("live"))).extracting(PodCondition::getStatus).isEqualTo("True");
        assertThat(writer.write(status(node, pod("live"), claim, device, HealthStatus.UNHEALTHY, "devhealth's own view: XID 48", t0, 2)))
                .isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        assertThat(condition(pod("live"))).satisfies(c -> {
            assertThat(c.getStatus()).isEqualTo("False");
            assertThat(c.getMessage()).contains(device).contains("Unhealthy").contains("XID 48");
        });
        sleep(THREE_SYNCS);
        Pod after = pod("live");
        assertThat(kubeletEntries(after)).as("the kubelet's allocatedResourcesStatus, untouched").isEqualTo(kubelets);
        assertThat(condition(after)).extracting(PodCondition::getStatus).isEqualTo("False");
        assertThat(writer.record(NAMESPACE, "live")).as("no record of a live pod").isEmpty();

        node.runtime().exit(NAMESPACE, "live", "main", 1, "CUDA error");
        await().atMost(WAIT).until(() -> "Failed".equals(pod("live").getStatus().getPhase()));
        List<ResourceStatus> kubeletsAtEnd = kubeletEntries(pod("live"));
        assertThat(writer.write(status(node, pod("live"), claim, device, HealthStatus.UNHEALTHY, "devhealth's own view: XID 48", t0, 3)))
                .isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        DevicePostMortem.Spec recorded = writer.record(NAMESPACE, "live").orElseThrow().getSpec();
        sleep(THREE_SYNCS);
        assertThat(writer.record(NAMESPACE, "live").orElseThrow().getSpec()).isEqualTo(recorded);
        assertThat(condition(pod("live"))).extracting(PodCondition::getStatus).isEqualTo("False");
        assertThat(kubeletEntries(pod("live"))).as("still the kubelet's own").isEqualTo(kubeletsAtEnd);
    }

    /**
     * The product's promise: XID 79 on a running job's GPU, the job's container exits 1, the pod fails;
     * the failure, reported after the crash but within the post-termination window, is recorded; the
     * record says exactly that after three kubelet syncs, after a kubelet restart, and after the GPU
     * recovers.
     */
    @Test
    void shouldKeepTheFailedJobsDeviceHealthAsItDiedThroughSyncsAKubeletRestartAndARecovery(RealNode node) {
        GpuWorkloads.batchPod(admin, NAMESPACE, "train-xid", "one-gpu");
        await().atMost(WAIT).until(() -> "Running".equals(pod("train-xid").getStatus().getPhase()));
        ResourceClaim claim = claimOf("train-xid");
        String device = claim.getStatus().getAllocation().getDevices().getResults().get(0).getDevice();
        PodStatusWriter writer = PodStatusWriter.builder(sink, Clock.systemUTC()).build();
        writer.write(status(node, pod("train-xid"), claim, device, HealthStatus.HEALTHY, null, Instant.now(), 1));

        node.driver().setHealth(device, "Unhealthy", XID);
        node.runtime().exit(NAMESPACE, "train-xid", "main", 1, "CUDA error: an illegal memory access");
        await().atMost(WAIT).until(() -> "Failed".equals(pod("train-xid").getStatus().getPhase()));
        Instant failedSeen = Instant.now();
        Instant finishedAt = Instant.parse(pod("train-xid").getStatus().getContainerStatuses().get(0).getState()
                .getTerminated().getFinishedAt());
        // The failure is reported two seconds after the crash, as drivers often do.
        PodDeviceStatus xid = status(node, pod("train-xid"), claim, device, HealthStatus.UNHEALTHY, XID, finishedAt.plusSeconds(2), 2);
        assertThat(writer.write(xid)).isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        DevicePostMortem record = writer.record(NAMESPACE, "train-xid").orElseThrow();
        LOGGER.info("post-mortem recorded afterFailedMs={} afterFinishedAtMs={}", Duration.between(failedSeen, Instant.now()).toMillis(),
                Duration.between(finishedAt, Instant.now()).toMillis());
        DevicePostMortem.Spec died = record.getSpec();
        assertThat(died.pod().uid()).isEqualTo(pod("train-xid").getMetadata().getUid());
        assertThat(died.node()).isEqualTo(node.name());
        assertThat(died.health()).isEqualTo("Unhealthy");
        assertThat(died.finishedAt()).isEqualTo(finishedAt.toString());
        assertThat(died.containers()).singleElement().satisfies(c -> {
            assertThat(c.exitCode()).isEqualTo(1);
            assertThat(c.resources()).singleElement().satisfies(r -> {
                assertThat(r.name()).isEqualTo("claim:" + pod("train-xid").getSpec().getContainers().get(0).getResources().getClaims().get(0).getName()
                        + requestSuffix(pod("train-xid")));
                assertThat(r.devices()).singleElement().satisfies(d -> {
                    assertThat(d.device()).isEqualTo(device);
                    assertThat(d.request()).as("from the claim's allocation results")
                            .isEqualTo(claim.getStatus().getAllocation().getDevices().getResults().get(0).getRequest());
                    assertThat(d.health()).isEqualTo("Unhealthy");
                    assertThat(d.message()).isEqualTo(XID);
                });
            });
        });
        assertThat(condition(pod("train-xid"))).satisfies(c -> {
            assertThat(c.getStatus()).isEqualTo("False");
            assertThat(c.getMessage()).isEqualTo(died.message()).contains(device, "Unhealthy", XID);
        });

        sleep(THREE_SYNCS);
        assertThat(writer.record(NAMESPACE, "train-xid").orElseThrow().getSpec()).as("after three kubelet syncs").isEqualTo(died);
        assertThat(condition(pod("train-xid")).getMessage()).isEqualTo(died.message());

        node.restartKubelet();
        sleep(Duration.ofSeconds(15));
        assertThat(writer.record(NAMESPACE, "train-xid").orElseThrow().getSpec()).as("after a kubelet restart").isEqualTo(died);
        assertThat(condition(pod("train-xid")).getMessage()).isEqualTo(died.message());

        node.driver().setHealth(device, "Healthy", "");
        Instant repaired = Instant.now();
        assertThat(writer.write(status(node, pod("train-xid"), claim, device, HealthStatus.HEALTHY, null, repaired, 3)))
                .isEqualTo(PodStatusWriter.Outcome.UNCHANGED);
        assertThat(writer.record(NAMESPACE, "train-xid").orElseThrow().getSpec()).as("after the GPU recovered").isEqualTo(died);
        assertThat(condition(pod("train-xid")).getStatus()).isEqualTo("False");
    }

    /**
     * Only the node the API server binds a pod to may set its condition: another node's status for the
     * pod (a compromised node, or a forged record) is refused, however well-formed.
     */
    @Test
    void shouldRefuseAStatusForThePodFromAnotherNode(RealNode node) {
        GpuWorkloads.batchPod(admin, NAMESPACE, "bound", "one-gpu");
        await().atMost(WAIT).until(() -> "Running".equals(pod("bound").getStatus().getPhase()));
        ResourceClaim claim = claimOf("bound");
        String device = claim.getStatus().getAllocation().getDevices().getResults().get(0).getDevice();
        PodStatusWriter writer = PodStatusWriter.builder(sink, Clock.systemUTC()).build();
        PodDeviceStatus own = status(node, pod("bound"), claim, device, HealthStatus.UNHEALTHY, XID, Instant.now(), 1);
        String otherNode = ControlPlane.NODE_NAMES.stream().filter(n -> !n.equals(node.name())).findFirst().orElseThrow();
        String resourceVersion = pod("bound").getMetadata().getResourceVersion();

        assertThat(writer.write(PodDeviceStatus.newBuilder(own).setNode(otherNode).build())).isEqualTo(PodStatusWriter.Outcome.OTHER_POD);
        assertThat(writer.write(PodDeviceStatus.newBuilder(own).setNode("").build())).isEqualTo(PodStatusWriter.Outcome.OTHER_POD);
        assertThat(pod("bound").getSpec().getNodeName()).isEqualTo(node.name());
        assertThat(condition(pod("bound"))).as("nothing written").isNull();
        assertThat(pod("bound").getMetadata().getResourceVersion()).isEqualTo(resourceVersion);

        assertThat(writer.write(own)).isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        assertThat(condition(pod("bound")).getStatus()).isEqualTo("False");
        // Frees its GPU for the other tests (the node has few).
        node.runtime().exit(NAMESPACE, "bound", "main", 0, "done");
        await().atMost(WAIT).until(() -> "Succeeded".equals(pod("bound").getStatus().getPhase()));
    }

    /** A pod deleted and re-created under the same name (its claim re-made from the template) starts clean. */
    @Test
    void shouldStartAPodReCreatedUnderTheSameNameClean(RealNode node) {
        GpuWorkloads.batchPod(admin, NAMESPACE, "retry", "one-gpu");
        await().atMost(WAIT).until(() -> "Running".equals(pod("retry").getStatus().getPhase()));
        ResourceClaim firstClaim = claimOf("retry");
        String device = firstClaim.getStatus().getAllocation().getDevices().getResults().get(0).getDevice();
        PodStatusWriter writer = PodStatusWriter.builder(sink, Clock.systemUTC()).build();
        node.runtime().exit(NAMESPACE, "retry", "main", 1, "crashed");
        await().atMost(WAIT).until(() -> "Failed".equals(pod("retry").getStatus().getPhase()));
        String firstUid = pod("retry").getMetadata().getUid();
        PodDeviceStatus first = status(node, pod("retry"), firstClaim, device, HealthStatus.UNHEALTHY, XID, Instant.now().minusSeconds(30), 1);
        assertThat(writer.write(first)).isEqualTo(PodStatusWriter.Outcome.WRITTEN);

        admin.pods().inNamespace(NAMESPACE).withName("retry").withGracePeriod(0).delete();
        await().atMost(WAIT).until(() -> pod("retry") == null);
        GpuWorkloads.batchPod(admin, NAMESPACE, "retry", "one-gpu");
        await().atMost(WAIT).until(() -> pod("retry") != null && "Running".equals(pod("retry").getStatus().getPhase()));
        assertThat(pod("retry").getMetadata().getUid()).isNotEqualTo(firstUid);

        // The earlier pod's status, as the pipeline has it (no UID: PodResources carries none).
        PodDeviceStatus stale = PodDeviceStatus.newBuilder(first).setPod(new PodRef(NAMESPACE, "retry", null)).build();
        assertThat(writer.write(stale)).isEqualTo(PodStatusWriter.Outcome.OTHER_POD);
        assertThat(condition(pod("retry"))).as("the new pod starts clean").isNull();
        assertThat(writer.record(NAMESPACE, "retry").orElseThrow().getSpec().pod().uid()).as("the earlier pod's record").isEqualTo(firstUid);

        ResourceClaim secondClaim = claimOf("retry");
        String secondDevice = secondClaim.getStatus().getAllocation().getDevices().getResults().get(0).getDevice();
        assertThat(writer.write(status(node, pod("retry"), secondClaim, secondDevice, HealthStatus.HEALTHY, null, Instant.now(), 2)))
                .isEqualTo(PodStatusWriter.Outcome.WRITTEN);
        assertThat(condition(pod("retry")).getStatus()).isEqualTo("True");
    }

    private static String requestSuffix(Pod pod) {
        String request = pod.getSpec().getContainers().get(0).getResources().getClaims().get(0).getRequest();
        return request == null || request.isEmpty() ? "" : "/" + request;
    }

    private static ResourceClaim claimOf(String pod) {
        return RealPodStatuses.claimOf(admin, NAMESPACE, pod);
    }

    private static PodDeviceStatus status(RealNode node, Pod pod, ResourceClaim claim, String device, HealthStatus health,
                                          String message, Instant since, long version) {
        return RealPodStatuses.status(node, NAMESPACE, pod.getMetadata().getName(), claim, device, health, message, since, version);
    }

    private static List<ResourceStatus> kubeletEntries(Pod pod) {
        return pod.getStatus().getContainerStatuses().get(0).getAllocatedResourcesStatus();
    }

    private static PodCondition condition(Pod pod) {
        return pod.getStatus().getConditions().stream().filter(c -> PodStatusWriter.CONDITION_TYPE.equals(c.getType()))
                .findFirst().orElse(null);
    }

    private static void assertForbidden(Runnable call) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(KubernetesClientException.class,
                e -> assertThat(e.getCode()).isEqualTo(403));
    }

    private static Pod pod(String name) {
        return admin.pods().inNamespace(NAMESPACE).withName(name).get();
    }

    private static void sleep(Duration duration) {
        try {
            TimeUnit.MILLISECONDS.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
