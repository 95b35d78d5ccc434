package io.devhealth.testkit.realkube;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
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

    /**
     * A batch pod: one container {@code main} holding the pod's claim {@code gpu} from {@code template}.
     * No service-account token is mounted: the fake runtime runs nothing that could read it.
     */
    public static Pod batchPod(KubernetesClient client, String namespace, String name, String template) {
        Pod pod = new PodBuilder()
                .withNewMetadata().withName(name).withNamespace(namespace).addToLabels("app", "devhealth-test").endMetadata()
                .withNewSpec()
                        .withRestartPolicy("Never")
                        .withAutomountServiceAccountToken(false)
                        .withTerminationGracePeriodSeconds(1L)
                        .addNewResourceClaim().withName("gpu").withResourceClaimTemplateName(template).endResourceClaim()
                        .addNewContainer().withName("main").withImage("registry.devhealth.test/train:1")
                                .withNewResources().addNewClaim().withName("gpu").endClaim().endResources()
                        .endContainer()
                .endSpec().build();
        return client.resource(pod).create();
    }
}
