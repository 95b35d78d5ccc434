package io.devhealth.cli.demo;

import io.devhealth.schema.HealthWords;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.proto.podresources.v1.PodResources;
import io.devhealth.simulators.kube.PodFixtures;
import io.devhealth.simulators.kubelet.FakeKubelet;
import io.devhealth.sink.condition.PodStatusWriter;
import io.devhealth.sink.postmortem.DevicePostMortem;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Optional;

/**
 * A simulated batch job pod that uses one GPU through a DRA ResourceClaim: it exists in the
 * Kubernetes API (as the scheduler and kubelet would have made it) and in its node's kubelet
 * PodResources (as the kubelet reports allocations).
 *
 * @param claimReference the pod-level claim name ({@code spec.resourceClaims[].name}), used in {@code claim:<ref>/<request>}
 *     (how the kubelet and devhealth's post-mortem record name the claim's entry)
 * @param resourceClaim the ResourceClaim object name, what PodResources reports
 */
public record BatchJob(String namespace, String name, String container, String claimReference, String request,
                       String resourceClaim, String node, String device) {

    public static BatchJob onDevice(String namespace, String name, String node, String device) {
        return new BatchJob(namespace, name, "trainer", "gpu", "gpu", name + "-gpu-7xk2p", node, device);
    }

    /** The CDI id the simulated driver hands out for the device (what the kubelet uses as resourceID). */
    public String cdiId() {
        return EmbeddedPipeline.DRIVER + "/gpu=" + device;
    }

    public String entryName() {
        return "claim:" + claimReference + "/" + request;
    }

    /** Creates the running pod in the API server and makes the node's kubelet report its allocation (only this one). */
    public Pod schedule(KubernetesClient client, FakeKubelet kubelet) {
        Pod pod = createRunning(client);
        kubelet.setPods(podResources());
        return pod;
    }

    /** Creates the pod in the API server and sets its status as the kubelet would (Running). */
    public Pod createRunning(KubernetesClient client) {
        return PodFixtures.createRunning(client,
                PodFixtures.podWithClaim(namespace, name, node, container, claimReference, resourceClaim, request));
    }

    /** The allocation the node's kubelet reports for this job through PodResources. */
    public PodResources podResources() {
        return FakeKubelet.pod(namespace, name)
                .container(container)
                .draDevice(resourceClaim, namespace, EmbeddedPipeline.DRIVER, node, device, cdiId())
                .done()
                .build();
    }

    public Pod current(KubernetesClient client) {
        return client.pods().inNamespace(namespace).withName(name).get();
    }

    /** devhealth's post-mortem record of this job's pod, once it terminated. */
    public Optional<DevicePostMortem> postMortem(KubernetesClient client) {
        return Optional.ofNullable(client.resources(DevicePostMortem.class).inNamespace(namespace).withName(name).get());
    }

    /** This job's GPU as its post-mortem record shows it (health as of the moment the job ended), if recorded. */
    public Optional<DevicePostMortem.DeviceRecord> recordedDevice(KubernetesClient client) {
        return postMortem(client).map(DevicePostMortem::getSpec).stream()
                .flatMap(spec -> spec.containers().stream())
                .filter(c -> container.equals(c.name()))
                .flatMap(c -> c.resources().stream())
                .filter(r -> entryName().equals(r.name()))
                .flatMap(r -> r.devices().stream())
                .filter(d -> cdiId().equals(d.resourceID()))
                .findFirst();
    }

    /** Health as devhealth's condition states it: Healthy (True), Unhealthy (False) or Unknown; empty without it. */
    public Optional<String> conditionHealth(KubernetesClient client) {
        return condition(client).map(c -> HealthWords.of(switch (c.getStatus()) {
            case "True" -> HealthStatus.HEALTHY;
            case "False" -> HealthStatus.UNHEALTHY;
            default -> HealthStatus.UNKNOWN;
        }));
    }

    /** devhealth's own pod condition, if written. */
    public Optional<PodCondition> condition(KubernetesClient client) {
        return condition(client, PodStatusWriter.CONDITION_TYPE);
    }

    /** The condition of {@code type}, if the pod has it. */
    public Optional<PodCondition> condition(KubernetesClient client, String type) {
        Pod pod = current(client);
        if (pod == null || pod.getStatus() == null || pod.getStatus().getConditions() == null) {
            return Optional.empty();
        }
        return pod.getStatus().getConditions().stream().filter(c -> type.equals(c.getType())).findFirst();
    }
}
