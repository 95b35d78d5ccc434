package io.devhealth.testkit.realkube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.GpuWorkloads;
import io.devhealth.simulators.realkube.RealNode;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.ResourceHealth;
import io.fabric8.kubernetes.api.model.ResourceStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the real kubelet does to pod status written by someone else — the behaviour devhealth's sink
 * is designed around. The kubelet's status manager ({@code pkg/kubelet/status/status_manager.go})
 * runs {@code syncBatch(all=true)} every {@code syncPeriod} (10 s); {@code needsReconcile} compares the
 * API's copy with its cache ({@code isPodStatusByKubeletEqual}, which ignores conditions the kubelet
 * does not own) and, when they differ, {@code syncPod} writes its cached status back through
 * {@code mergePodStatus}, which keeps only the conditions of types the kubelet does not own. So a
 * foreign condition stays and a foreign {@code allocatedResourcesStatus} is put back — on a running and
 * on a terminated pod alike, for as long as the kubelet knows the pod.
 */
@RealKubernetes
class KubeletStatusReconcileIT {

    private static final Logger LOGGER = LoggerFactory.getLogger(KubeletStatusReconcileIT.class);
    private static final String NAMESPACE = "reconcile";
    private static final String CONDITION = "devhealth.io/DevicesHealthy";
    private static final String FORGED_ID = "devhealth.test/forged-device";
    /** Three sync periods: long enough that the kubelet has reconciled at least twice. */
    private static final Duration OBSERVE = Duration.ofSeconds(35);

    private static KubernetesClient client;

    @BeforeAll
    static void startPods(ControlPlane plane, RealNode node) {
        client = plane.adminClient();
        GpuWorkloads.prepare(client, NAMESPACE);
        GpuWorkloads.claimTemplate(client, NAMESPACE, "one-gpu", 1);
        GpuWorkloads.batchPod(client, NAMESPACE, "running", "one-gpu");
        GpuWorkloads.batchPod(client, NAMESPACE, "terminated", "one-gpu");
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            assertThat(phase("running")).isEqualTo("Running");
            assertThat(phase("terminated")).isEqualTo("Running");
        });
        node.runtime().exit(NAMESPACE, "terminated", "main", 1, "crashed");
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(phase("terminated")).isEqualTo("Failed"));
    }

    @Test
    void shouldKeepAForeignConditionAndPutBackAForeignAllocatedResourcesStatusOnRunningAndTerminatedPods() {
        Map<String, Long> writtenAt = new LinkedHashMap<>();
        for (String pod : new String[] {"running", "terminated"}) {
            writeAsSecondClient(pod);
            writtenAt.put(pod, System.nanoTime());
            assertThat(forgedEntry(get(pod))).as("the write itself is accepted for %s", pod).isPresent();
        }

        Map<String, Long> revertedAfterMillis = new LinkedHashMap<>();
        long end = System.nanoTime() + OBSERVE.toNanos();
        while (System.nanoTime() < end) {
            for (String pod : writtenAt.keySet()) {
                Pod current = get(pod);
                assertThat(condition(current)).as("devhealth's condition on the %s pod", pod).isPresent();
                if (!revertedAfterMillis.containsKey(pod) && forgedEntry(current).isEmpty()) {
                    revertedAfterMillis.put(pod, (System.nanoTime() - writtenAt.get(pod)) / 1_000_000);
                }
            }
            sleep(250);
        }
        LOGGER.info("foreign allocatedResourcesStatus reverted by the kubelet after ms={} (condition kept for s={})",
                revertedAfterMillis, OBSERVE.toSeconds());
        assertThat(revertedAfterMillis).as("pods whose foreign allocatedResourcesStatus the kubelet put back")
                .containsOnlyKeys("running", "terminated");
        // One sync period plus the time the status manager's API call and our polling take.
        assertThat(revertedAfterMillis.values()).allSatisfy(ms -> assertThat(ms).isLessThan(15_000));
    }

    /** What devhealth's old sink did: a condition of its own and an allocatedResourcesStatus entry. */
    private static void writeAsSecondClient(String pod) {
        client.pods().inNamespace(NAMESPACE).withName(pod).editStatus(p -> new PodBuilder(p).editStatus()
                .addNewCondition().withType(CONDITION).withStatus("False").withReason("DeviceUnhealthy")
                        .withMessage("gpu-0 Unhealthy: XID 79").withLastTransitionTime("2026-12-01T00:00:00Z").endCondition()
                .editFirstContainerStatus().withAllocatedResourcesStatus(new ResourceStatusBuilder()
                        .withName("claim:gpu").addNewResource().withResourceID(FORGED_ID).withHealth("Unhealthy")
                        .endResource().build()).endContainerStatus()
                .endStatus().build());
    }

    private static Optional<PodCondition> condition(Pod pod) {
        return pod.getStatus().getConditions().stream().filter(c -> CONDITION.equals(c.getType())).findFirst();
    }

    private static Optional<ResourceHealth> forgedEntry(Pod pod) {
        var statuses = pod.getStatus().getContainerStatuses().get(0).getAllocatedResourcesStatus();
        return statuses == null ? Optional.empty() : statuses.stream().flatMap(s -> s.getResources().stream())
                .filter(r -> FORGED_ID.equals(r.getResourceID())).findFirst();
    }

    private static String phase(String pod) {
        return get(pod).getStatus().getPhase();
    }

    private static Pod get(String pod) {
        return client.pods().inNamespace(NAMESPACE).withName(pod).get();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
