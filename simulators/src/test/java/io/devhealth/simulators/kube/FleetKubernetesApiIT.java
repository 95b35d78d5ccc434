package io.devhealth.simulators.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class FleetKubernetesApiIT {

    private static final String MANAGED_BY = "app.kubernetes.io/managed-by";

    private static FleetKubernetesApi api;


    @BeforeAll
    static void startApi() {
        api = FleetKubernetesApi.start();
    }

    @AfterAll
    static void stopApi() {
        api.close();
        api.close();
    }

    private static Pod running(String namespace, String name) {
        return PodFixtures.createRunning(api.client(), PodFixtures.podWithClaim(namespace, name, "node-a", "main", "gpu", name + "-gpu", null));
    }

    @Test
    void shouldCreateGetAndAnswer404() {
        Pod created = api.client().pods().inNamespace("crud")
                .resource(PodFixtures.podWithClaim("crud", "p-0", "node-a", "main", "gpu", "p-0-gpu", null)).create();

        Pod stored = api.client().pods().inNamespace("crud").withName("p-0").get();
        assertThat(stored.getMetadata().getUid()).isNotBlank().isEqualTo(created.getMetadata().getUid());
        assertThat(stored.getMetadata().getResourceVersion()).isEqualTo(created.getMetadata().getResourceVersion());
        assertThat(stored.getSpec().getResourceClaims()).singleElement()
                .satisfies(c -> assertThat(c.getResourceClaimName()).isEqualTo("p-0-gpu"));
        assertThat(stored.getStatus().getPhase()).as("status on create is the server's, not the client's").isEqualTo("Pending");
        assertThat(api.client().pods().inNamespace("crud").withName("absent").get()).isNull();
        assertThatThrownBy(() -> api.client().pods().inNamespace("crud")
                .resource(PodFixtures.podWithClaim("crud", "p-0", "node-a", "main", "gpu", "x", null)).create())
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    }

    @Test
    void shouldApplyJsonPatchOnStatusAndRejectAFailedTestWith422() {
        Pod pod = running("patch", "p-1");
        long before = Long.parseLong(pod.getMetadata().getResourceVersion());
        String condition = "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"%s\"},"
                + "{\"op\":\"add\",\"path\":\"/status/conditions/-\",\"value\":{\"type\":\"devhealth.io/DevicesHealthy\",\"status\":\"%s\"}}]";

        Pod written = api.client().pods().inNamespace("patch").withName("p-1").subresource("status")
                .patch(PatchContext.of(PatchType.JSON), condition.formatted(before, "True"));

        assertThat(Long.parseLong(written.getMetadata().getResourceVersion())).isGreaterThan(before);
        assertThat(conditionStatus(written)).isEqualTo("True");
        assertThatThrownBy(() -> api.client().pods().inNamespace("patch").withName("p-1").subresource("status")
                .patch(PatchContext.of(PatchType.JSON), condition.formatted(before, "False")))
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(422));
        Pod after = api.client().pods().inNamespace("patch").withName("p-1").get();
        assertThat(after.getMetadata().getResourceVersion()).isEqualTo(written.getMetadata().getResourceVersion());
        assertThat(conditionStatus(after)).isEqualTo("True");
    }

    @Test
    void shouldApplyMergePatchAndKeepStatusOffTheMainResource() {
        running("merge", "p-2");

        Pod patched = api.client().pods().inNamespace("merge").withName("p-2").patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"labels\":{\"team\":\"ml\"}},\"status\":{\"phase\":\"Failed\"}}");

        assertThat(patched.getMetadata().getLabels()).containsEntry("team", "ml");
        assertThat(patched.getStatus().getPhase()).isEqualTo("Running");
    }

    @Test
    void shouldListByPhaseAndName() {
        running("list", "a");
        running("list", "b");
        PodFixtures.markTerminated(api.client(), "list", "b", 0, Instant.now());

        assertThat(names(api.client().pods().inNamespace("list").withField("status.phase", "Running").list().getItems())).containsExactly("a");
        assertThat(names(api.client().pods().inNamespace("list").withoutField("status.phase", "Running").list().getItems())).containsExactly("b");
        assertThat(names(api.client().pods().inAnyNamespace().withField("metadata.name", "b").list().getItems())).containsExactly("b");
        assertThat(names(api.client().pods().inNamespace("list").list().getItems())).containsExactly("a", "b");
        assertThatThrownBy(() -> api.client().pods().inNamespace("list").withField("spec.restartPolicy", "Never").list())
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(400));
    }

    @Test
    void shouldFeedAnInformerOnlyTheTerminatedPods() throws Exception {
        running("informer", "early-done");
        PodFixtures.markTerminated(api.client(), "informer", "early-done", 0, Instant.now());
        running("informer", "still-running");
        BlockingQueue<String> seen = new LinkedBlockingQueue<>();
        // As the sink's TerminatedPodWatcher asks (all namespaces; other tests' pods are ignored here).
        SharedIndexInformer<Pod> informer = api.client().pods().inAnyNamespace()
                .withoutField("status.phase", "Pending")
                .withoutField("status.phase", "Running")
                .withoutField("status.phase", "Unknown")
                .inform(new ResourceEventHandler<>() {
                    @Override
                    public void onAdd(Pod pod) {
                        if (ours(pod)) {
                            seen.add("add " + pod.getMetadata().getName() + " " + pod.getStatus().getPhase());
                        }
                    }

                    @Override
                    public void onUpdate(Pod oldPod, Pod newPod) {
                        if (ours(newPod)) {
                            seen.add("update " + newPod.getMetadata().getName() + " " + newPod.getStatus().getPhase());
                        }
                    }

                    @Override
                    public void onDelete(Pod pod, boolean deletedFinalStateUnknown) {
                        if (ours(pod)) {
                            seen.add("delete " + pod.getMetadata().getName());
                        }
                    }
                });
        try {
            assertThat(seen.poll(10, TimeUnit.SECONDS)).isEqualTo("add early-done Succeeded");

            PodFixtures.markTerminated(api.client(), "informer", "still-running", 1, Instant.now());
            assertThat(seen.poll(10, TimeUnit.SECONDS)).isEqualTo("add still-running Failed");

            api.client().pods().inNamespace("informer").withName("early-done").delete();
            assertThat(seen.poll(10, TimeUnit.SECONDS)).isEqualTo("delete early-done");
            assertThat(api.client().pods().inNamespace("informer").withName("early-done").get()).isNull();
            assertThat(seen.poll(300, TimeUnit.MILLISECONDS)).as("nothing else").isNull();
        } finally {
            informer.close();
        }
    }

    @Test
    void shouldCountEventsAndCallPodListeners() {
        BlockingQueue<PodChange> changes = new LinkedBlockingQueue<>();
        PodChangeListener listener = change -> {
            if ("events".equals(change.namespace())) {
                changes.add(change);
            }
        };
        api.addPodListener(listener);
        long eventsBefore = api.eventsAccepted();
        FleetKubernetesApi.RequestCounts countsBefore = api.requestCounts();
        try {
            long start = System.nanoTime();
            Pod pod = running("events", "p-3");
            api.client().v1().events().inNamespace("events").resource(new EventBuilder()
                    .withNewMetadata().withGenerateName("p-3.").endMetadata()
                    .withNewInvolvedObject().withKind("Pod").withNamespace("events").withName("p-3").endInvolvedObject()
                    .withReason("DevicesHealthy").withMessage("all devices healthy").withType("Normal").build()).create();

            assertThat(api.eventsAccepted()).isEqualTo(eventsBefore + 1);
            assertThat(api.recentEvents()).anySatisfy(e -> assertThat(e.getReason()).isEqualTo("DevicesHealthy"));
            FleetKubernetesApi.RequestCounts counts = api.requestCounts();
            assertThat(counts.eventWrites() - countsBefore.eventWrites()).isEqualTo(1);
            assertThat(counts.statusWrites() - countsBefore.statusWrites()).as("the kubelet-like status write").isEqualTo(1);
            assertThat(changes).hasSize(2);
            PodChange created = changes.poll();
            PodChange statusSet = changes.poll();
            assertThat(created.action()).isEqualTo(Watcher.Action.ADDED);
            assertThat(statusSet.action()).isEqualTo(Watcher.Action.MODIFIED);
            assertThat(statusSet.phase()).isEqualTo("Running");
            assertThat(statusSet.appliedAtNanos()).isGreaterThanOrEqualTo(created.appliedAtNanos()).isGreaterThan(start);
            assertThat(statusSet.pod().getMetadata().getResourceVersion()).isEqualTo(pod.getMetadata().getResourceVersion());
        } finally {
            api.removePodListener(listener);
        }
    }

    @Test
    void shouldServeTheFabric8Client() {
        Pod pod = PodFixtures.podWithClaim("ml", "fabric8-pod", "node-a", "main", "gpu", "fabric8-pod-gpu", "gpu");

        api.client().pods().inNamespace("ml").resource(pod).create();

        Pod stored = api.client().pods().inNamespace("ml").withName("fabric8-pod").get();
        assertThat(stored.getSpec().getResourceClaims()).singleElement()
                .satisfies(c -> assertThat(c.getResourceClaimName()).isEqualTo("fabric8-pod-gpu"));
        assertThat(api.url()).isEqualTo("http://127.0.0.1:" + api.port());
        assertThat(api.kubectlCommand("get pods -A")).isEqualTo("kubectl --server " + api.url() + " get pods -A");
    }

    @Test
    void shouldStoreCustomResourcesInANamespaceAndAcrossNamespaces() {
        GenericKubernetesResource created = postMortem("pm-a", "job-0", "Unhealthy").create();
        postMortem("pm-b", "job-1", "Healthy").create();
        postMortem("pm-b", "other", "Healthy").create();

        assertThat(created.getMetadata().getUid()).isNotBlank();
        assertThat(created.getMetadata().getResourceVersion()).isNotBlank();
        GenericKubernetesResource stored = postMortems().inNamespace("pm-a").withName("job-0").get();
        assertThat(stored.getApiVersion()).isEqualTo("devhealth.io/v1alpha1");
        assertThat(stored.getKind()).isEqualTo("DevicePostMortem");
        assertThat(health(stored)).isEqualTo("Unhealthy");
        assertThat(postMortems().inNamespace("pm-a").withName("absent").get()).isNull();
        assertThat(names(postMortems().inNamespace("pm-b").list().getItems())).containsExactly("job-1", "other");
        assertThat(names(postMortems().inAnyNamespace().withLabel(MANAGED_BY, "devhealth-sink").list().getItems()))
                .contains("job-0", "job-1", "other");
        assertThat(names(postMortems().inAnyNamespace().withLabel("devhealth.io/pod", "job-1").list().getItems())).containsExactly("job-1");
        assertThatThrownBy(() -> postMortem("pm-a", "job-0", "Healthy").create())
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    }

    @Test
    void shouldPatchUpdateAndDeleteCustomResourcesAsTheSinkDoes() {
        GenericKubernetesResource record = postMortem("pm-c", "job-2", "Healthy").create();
        String version = record.getMetadata().getResourceVersion();
        String guarded = "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"%s\"},"
                + "{\"op\":\"replace\",\"path\":\"/spec\",\"value\":{\"health\":\"%s\"}}]";

        GenericKubernetesResource patched = postMortems().inNamespace("pm-c").withName("job-2")
                .patch(PatchContext.of(PatchType.JSON), guarded.formatted(version, "Unhealthy"));

        assertThat(health(patched)).isEqualTo("Unhealthy");
        assertThat(patched.getMetadata().getResourceVersion()).isNotEqualTo(version);
        assertThatThrownBy(() -> postMortems().inNamespace("pm-c").withName("job-2")
                .patch(PatchContext.of(PatchType.JSON), guarded.formatted(version, "Unknown")))
                .as("a record that moved since it was read").isInstanceOfSatisfying(KubernetesClientException.class,
                        e -> assertThat(e.getCode()).isEqualTo(422));
        GenericKubernetesResource merged = postMortems().inNamespace("pm-c").withName("job-2")
                .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"frozen\":true}}");
        assertThat(merged.getAdditionalProperties().get("spec")).isEqualTo(Map.of("health", "Unhealthy", "frozen", true));
        merged.getAdditionalProperties().put("spec", Map.of("health", "Healthy"));
        assertThat(health(postMortems().inNamespace("pm-c").resource(merged).update())).isEqualTo("Healthy");
        assertThatThrownBy(() -> postMortems().inNamespace("pm-c").resource(merged).update())
                .as("a stale resourceVersion").isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));

        assertThat(postMortems().inNamespace("pm-c").withName("job-2").delete()).hasSize(1);
        assertThat(postMortems().inNamespace("pm-c").withName("job-2").get()).isNull();
        assertThat(postMortems().inNamespace("pm-c").withName("job-2").delete()).isEmpty();
    }

    @Test
    void shouldKeepStatusOfASubresourceKindOffItsMainResource() {
        ResourceClaim claim = new ResourceClaimBuilder().withNewMetadata().withNamespace("claims").withName("gpu-claim").endMetadata()
                .withNewSpec().endSpec()
                .withNewStatus().addNewReservedFor().withResource("pods").withName("given-on-create").withUid("u-1").endReservedFor().endStatus()
                .build();

        ResourceClaim created = api.client().resources(ResourceClaim.class).inNamespace("claims").resource(claim).create();
        assertThat(created.getStatus()).as("status given on create is dropped").isNull();

        ResourceClaim allocated = api.client().resources(ResourceClaim.class).inNamespace("claims").withName("gpu-claim")
                .editStatus(c -> new ResourceClaimBuilder(c).withNewStatus().addNewReservedFor().withResource("pods").withName("p")
                        .withUid("u-2").endReservedFor().endStatus().build());
        assertThat(allocated.getStatus().getReservedFor()).singleElement().satisfies(r -> assertThat(r.getName()).isEqualTo("p"));
        assertThat(api.client().resources(ResourceClaim.class).inNamespace("claims").withName("gpu-claim").get().getStatus().getReservedFor())
                .singleElement().satisfies(r -> assertThat(r.getName()).isEqualTo("p"));
        assertThat(api.client().resources(ResourceClaim.class).inAnyNamespace().list().getItems()).extracting(c -> c.getMetadata().getName())
                .contains("gpu-claim");
    }

    @Test
    void shouldServeClusterScopedKindsAndRefuseUnknownOnes() {
        api.client().nodes().resource(new NodeBuilder().withNewMetadata().withName("node-z").addToLabels("gpu", "true").endMetadata().build())
                .create();

        assertThat(api.client().nodes().withName("node-z").get().getMetadata().getNamespace()).isNull();
        assertThat(names(api.client().nodes().withLabel("gpu", "true").list().getItems())).containsExactly("node-z");
        assertThat(api.client().namespaces().resource(new NamespaceBuilder().withNewMetadata().withName("made").endMetadata().build())
                .create().getMetadata().getName()).isEqualTo("made");
        assertThat(api.client().namespaces().withName("made").get()).isNotNull();
        assertThatThrownBy(() -> api.client().apps().deployments().inNamespace("ml").list())
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(404));
    }

    private static NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>>
            postMortemsIn(String namespace) {
        return postMortems().inNamespace(namespace);
    }

    /** Found through discovery (kind to plural), as fabric8 looks up a kind it has no class for. */
    private static MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>> postMortems() {
        return api.client().genericKubernetesResources("devhealth.io/v1alpha1", "DevicePostMortem");
    }

    private static Resource<GenericKubernetesResource> postMortem(String namespace, String name, String health) {
        GenericKubernetesResource record = new GenericKubernetesResourceBuilder().withApiVersion("devhealth.io/v1alpha1")
                .withKind("DevicePostMortem")
                .withNewMetadata().withNamespace(namespace).withName(name)
                    .addToLabels(MANAGED_BY, "devhealth-sink").addToLabels("devhealth.io/pod", name).endMetadata()
                .addToAdditionalProperties("spec", Map.of("health", health))
                .build();
        return postMortemsIn(namespace).resource(record);
    }

    @SuppressWarnings("unchecked")
    private static String health(GenericKubernetesResource record) {
        return (String) ((Map<String, Object>) record.getAdditionalProperties().get("spec")).get("health");
    }

    private static boolean ours(Pod pod) {
        return "informer".equals(pod.getMetadata().getNamespace());
    }

    private static String conditionStatus(Pod pod) {
        return pod.getStatus().getConditions().stream().filter(c -> "devhealth.io/DevicesHealthy".equals(c.getType()))
                .map(PodCondition::getStatus).findFirst().orElse(null);
    }

    private static List<String> names(List<? extends HasMetadata> objects) {
        return objects.stream().map(p -> p.getMetadata().getName()).toList();
    }
}
