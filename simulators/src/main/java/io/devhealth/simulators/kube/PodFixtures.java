package io.devhealth.simulators.kube;

import io.fabric8.kubernetes.api.model.ContainerStateBuilder;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pods as devhealth meets them: using DRA ResourceClaims, created by a user, then given a status by the
 * kubelet.
 *
 * <p>Status is always written through the {@code status} subresource, as the kubelet does: a real API
 * server (and {@link FleetKubernetesApi}) drops status given on create. The writes use fabric8's typed
 * {@code editStatus}, which sends a JSON Patch.
 */
public final class PodFixtures {

    /** Image put into fixture containers. */
    public static final String IMAGE = "registry.k8s.io/pause:3.10";

    private static final Logger LOGGER = LoggerFactory.getLogger(PodFixtures.class);

    private PodFixtures() {
    }

    /**
     * A pod with one container that uses one DRA claim.
     *
     * @param namespace the namespace
     * @param name the pod name
     * @param node {@code spec.nodeName}; {@code null} for an unscheduled pod
     * @param container the container name
     * @param podClaimRef the pod-level claim reference name ({@code spec.resourceClaims[].name}, also
     *     {@code resources.claims[].name}); the kubelet's status entry is {@code claim:<podClaimRef>/<request>}
     * @param resourceClaimName the ResourceClaim object name ({@code spec.resourceClaims[].resourceClaimName}),
     *     the name PodResources reports
     * @param request the request name inside the claim ({@code resources.claims[].request}); {@code null} or
     *     empty for "all requests"
     * @return the pod, without status
     */
    public static Pod podWithClaim(String namespace, String name, String node, String container, String podClaimRef,
            String resourceClaimName, String request) {
        Objects.requireNonNull(podClaimRef, "podClaimRef");
        String requestName = request == null || request.isEmpty() ? null : request;
        return new PodBuilder()
                .withNewMetadata()
                    .withNamespace(namespace)
                    .withName(name)
                    .addToLabels("app.kubernetes.io/name", name)
                .endMetadata()
                .withNewSpec()
                    .withNodeName(node)
                    .withRestartPolicy("Never")
                    .addNewResourceClaim()
                        .withName(podClaimRef)
                        .withResourceClaimName(resourceClaimName)
                    .endResourceClaim()
                    .addNewContainer()
                        .withName(container)
                        .withImage(IMAGE)
                        .withNewResources()
                            .addNewClaim()
                                .withName(podClaimRef)
                                .withRequest(requestName)
                            .endClaim()
                        .endResources()
                    .endContainer()
                .endSpec()
                .build();
    }

    /**
     * A pod with one container that is given {@code count} devices of a device plugin (e.g.
     * {@code nvidia.com/gpu}): an extended resource in the container's limits, no ResourceClaim. The
     * kubelet reports such devices through PodResources, which names neither claims nor the pod's UID.
     *
     * @param namespace the namespace
     * @param name the pod name
     * @param node {@code spec.nodeName}; {@code null} for an unscheduled pod
     * @param container the container name
     * @param resourceName the extended resource, e.g. {@code nvidia.com/gpu}
     * @param count how many devices the container asks for
     * @return the pod, without status
     */
    public static Pod podWithDevicePluginResource(String namespace, String name, String node, String container,
            String resourceName, int count) {
        return new PodBuilder()
                .withNewMetadata()
                    .withNamespace(namespace)
                    .withName(name)
                    .addToLabels("app.kubernetes.io/name", name)
                .endMetadata()
                .withNewSpec()
                    .withNodeName(node)
                    .withRestartPolicy("Never")
                    .addNewContainer()
                        .withName(container)
                        .withImage(IMAGE)
                        .withNewResources()
                            .addToLimits(resourceName, new Quantity(Integer.toString(count)))
                        .endResources()
                    .endContainer()
                .endSpec()
                .build();
    }

    /**
     * Creates the pod (any status in it is dropped, as a real API server does), then sets a running
     * status through the {@code status} subresource like the kubelet: phase {@code Running}, conditions
     * {@code PodScheduled}, {@code Initialized}, {@code ContainersReady}, {@code Ready} all {@code True},
     * and for every container {@code ready=true}, {@code started=true}, a running state, restart count 0.
     *
     * @param client the client
     * @param pod the pod to create
     * @return the pod as stored after the status write
     */
    public static Pod createRunning(KubernetesClient client, Pod pod) {
        String namespace = pod.getMetadata().getNamespace();
        String name = pod.getMetadata().getName();
        Pod created = client.pods().inNamespace(namespace)
                .resource(new PodBuilder(pod).withStatus(null).build())
                .create();
        Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        String time = timestamp(now);
        List<ContainerStatus> containerStatuses = new ArrayList<>();
        created.getSpec().getContainers().forEach(c -> containerStatuses.add(new ContainerStatusBuilder()
                .withName(c.getName())
                .withImage(c.getImage())
                .withImageID(c.getImage() + "@sha256:" + "0".repeat(64))
                .withContainerID("containerd://" + UUID.randomUUID().toString().replace("-", ""))
                .withReady(true)
                .withStarted(true)
                .withRestartCount(0)
                .withState(new ContainerStateBuilder().withNewRunning().withStartedAt(time).endRunning().build())
                .build()));
        PodStatus status = new PodStatusBuilder()
                .withPhase("Running")
                .withStartTime(time)
                .withHostIP(created.getSpec().getNodeName() == null ? null : "192.0.2.10")
                .withPodIP("10.244.0." + (1 + Math.floorMod(name.hashCode(), 250)))
                .withQosClass("BestEffort")
                .withConditions(
                        condition("PodScheduled", "True", time, null),
                        condition("Initialized", "True", time, null),
                        condition("ContainersReady", "True", time, null),
                        condition("Ready", "True", time, null))
                .withContainerStatuses(containerStatuses)
                .build();
        Pod running = client.pods().inNamespace(namespace).withName(name)
                .editStatus(p -> new PodBuilder(p).withStatus(status).build());
        LOGGER.info("pod created running namespace={} name={} node={} containers={}", namespace, name,
                created.getSpec().getNodeName(), containerStatuses.size());
        return running;
    }

    /**
     * Marks every container of a pod terminated, through the {@code status} subresource: phase
     * {@code Succeeded} for exit code 0, otherwise {@code Failed}; {@code Ready} and {@code ContainersReady}
     * {@code False}; each container {@code ready=false}, {@code started=false}, state {@code terminated}
     * with the exit code. All other status fields, including {@code allocatedResourcesStatus} entries,
     * are kept.
     *
     * @param client the client
     * @param namespace the namespace
     * @param name the pod name
     * @param exitCode the exit code of every container
     * @param finishedAt when the containers finished
     * @return the pod as stored after the status write
     * @throws IllegalStateException if the pod does not exist
     */
    public static Pod markTerminated(KubernetesClient client, String namespace, String name, int exitCode,
            Instant finishedAt) {
        if (client.pods().inNamespace(namespace).withName(name).get() == null) {
            throw new IllegalStateException("pod " + namespace + "/" + name + " does not exist");
        }
        String finished = timestamp(finishedAt.truncatedTo(ChronoUnit.SECONDS));
        boolean succeeded = exitCode == 0;
        String reason = succeeded ? "Completed" : "Error";
        Pod terminated = client.pods().inNamespace(namespace).withName(name).editStatus(pod -> {
            PodStatus old = pod.getStatus() == null ? new PodStatus() : pod.getStatus();
            List<ContainerStatus> statuses = new ArrayList<>();
            for (ContainerStatus cs : old.getContainerStatuses()) {
                String startedAt = cs.getState() != null && cs.getState().getRunning() != null
                        ? cs.getState().getRunning().getStartedAt()
                        : old.getStartTime();
                statuses.add(new ContainerStatusBuilder(cs)
                        .withReady(false)
                        .withStarted(false)
                        .withState(new ContainerStateBuilder().withNewTerminated()
                                .withExitCode(exitCode)
                                .withReason(reason)
                                .withStartedAt(startedAt)
                                .withFinishedAt(finished)
                                .withContainerID(cs.getContainerID())
                                .endTerminated()
                                .build())
                        .build());
            }
            List<PodCondition> conditions = new ArrayList<>();
            for (PodCondition c : old.getConditions()) {
                if ("Ready".equals(c.getType()) || "ContainersReady".equals(c.getType())) {
                    conditions.add(condition(c.getType(), "False", finished, succeeded ? "PodCompleted" : "PodFailed"));
                } else {
                    conditions.add(c);
                }
            }
            return new PodBuilder(pod)
                    .withStatus(new PodStatusBuilder(old)
                            .withPhase(succeeded ? "Succeeded" : "Failed")
                            .withConditions(conditions)
                            .withContainerStatuses(statuses)
                            .build())
                    .build();
        });
        LOGGER.info("pod marked terminated namespace={} name={} exitCode={} finishedAt={}", namespace, name, exitCode,
                finished);
        return terminated;
    }

    private static PodCondition condition(String type, String status, String time, String reason) {
        return new PodConditionBuilder()
                .withType(type)
                .withStatus(status)
                .withLastTransitionTime(time)
                .withReason(reason)
                .build();
    }

    private static String timestamp(Instant instant) {
        return DateTimeFormatter.ISO_INSTANT.format(instant);
    }
}
