package io.devhealth.simulators.realkube;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplateBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * The objects a GPU batch job is made of on a DRA cluster: a DeviceClass for the test driver's GPUs, a
 * ResourceClaimTemplate asking for some, and a pod that runs once ({@code restartPolicy: Never}) with
 * its containers holding the claim.
 */
public final class GpuWorkloads {

    /** The DeviceClass that selects the test driver's devices. */
    public static final String DEVICE_CLASS = "gpu.devhealth.test";

    private GpuWorkloads() {}

    /** Creates the DeviceClass (idempotent) and the namespace. */
    public static void prepare(KubernetesClient client, String namespace) {
        DeviceClass deviceClass = new DeviceClassBuilder()
                .withNewMetadata().withName(DEVICE_CLASS).endMetadata()
                .withNewSpec().addNewSelector().withNewCel()
                        .withExpression("device.driver == \"" + RealNode.DRIVER_NAME + "\"").endCel().endSelector()
                .endSpec().build();
        client.resource(deviceClass).forceConflicts().serverSideApply();
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
                .serverSideApply();
    }

    /** A template whose claims ask for {@code gpus} GPUs in one request named {@code gpu}. */
    public static ResourceClaimTemplate claimTemplate(KubernetesClient client, String namespace, String name, int gpus) {
        ResourceClaimTemplate template = new ResourceClaimTemplateBuilder()
                .withNewMetadata().withName(name).withNamespace(namespace).endMetadata()
                .withNewSpec().withNewSpec().withNewDevices().addNewRequest().withName("gpu")
                        .withNewExactly().withDeviceClassName(DEVICE_CLASS).withCount((long) gpus).endExactly()
                        .endRequest().endDevices().endSpec().endSpec()
                .build();
        return client.resource(template).serverSideApply();
    }

    /** A claim of its own (not from a template) for {@code gpus} GPUs, which several pods may share. */
    public static ResourceClaim sharedClaim(KubernetesClient client, String namespace, String name, int gpus) {
        ResourceClaim claim = new ResourceClaimBuilder()
                .withNewMetadata().withName(name).withNamespace(namespace).endMetadata()
                .withNewSpec().withNewDevices().addNewRequest().withName("gpu")
                        .withNewExactly().withDeviceClassName(DEVICE_CLASS).withCount((long) gpus).endExactly()
                        .endRequest().endDevices().endSpec()
                .build();
        return client.resource(claim).serverSideApply();
    }

    /** Like {@link #batchPod}, holding the existing claim {@code claim} (see {@link #sharedClaim}) instead of one from a template. */
    public static Pod batchPodSharing(KubernetesClient client, String namespace, String name, String claim) {
        return client.resource(pod(namespace, name, new PodResourceClaimBuilder().withName("gpu").withResourceClaimName(claim).build()))
                .create();
    }

    /**
     * A batch pod: one container {@code main} holding the pod's claim {@code gpu} from {@code template}.
     * No service-account token is mounted: the fake runtime runs nothing that could read it.
     */
    public static Pod batchPod(KubernetesClient client, String namespace, String name, String template) {
        return client.resource(pod(namespace, name, new PodResourceClaimBuilder().withName("gpu")
                .withResourceClaimTemplateName(template).build())).create();
    }

    private static Pod pod(String namespace, String name, PodResourceClaim claim) {
        return new PodBuilder()
                .withNewMetadata().withName(name).withNamespace(namespace).addToLabels("app", "devhealth-test").endMetadata()
                .withNewSpec()
                        .withRestartPolicy("Never")
                        .withAutomountServiceAccountToken(false)
                        .withTerminationGracePeriodSeconds(1L)
                        .withResourceClaims(claim)
                        .addNewContainer().withName("main").withImage("registry.devhealth.test/train:1")
                                .withNewResources().addNewClaim().withName("gpu").endClaim().endResources()
                        .endContainer()
                .endSpec().build();
    }
}
