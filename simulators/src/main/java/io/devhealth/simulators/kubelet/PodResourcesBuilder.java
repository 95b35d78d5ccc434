package io.devhealth.simulators.kubelet;

import io.devhealth.schema.proto.podresources.v1.CDIDevice;
import io.devhealth.schema.proto.podresources.v1.ClaimResource;
import io.devhealth.schema.proto.podresources.v1.ContainerDevices;
import io.devhealth.schema.proto.podresources.v1.ContainerResources;
import io.devhealth.schema.proto.podresources.v1.DynamicResource;
import io.devhealth.schema.proto.podresources.v1.PodResources;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Fluent builder for kubelet PodResources v1 {@link PodResources}, shaped like the kubelet fills them:
 * one {@code DynamicResource} per ResourceClaim a container uses, one {@code ClaimResource} per
 * (driver, pool, device) in that claim, device-plugin resources as {@code ContainerDevices}.
 *
 * <pre>{@code
 * PodResources pod = FakeKubelet.pod("ml", "trainer-0")
 *         .container("main")
 *             .draDevice("trainer-0-gpu-x7k2p", "ml", "gpu.example.com", "node-a", "gpu-0",
 *                     "gpu.example.com/gpu=gpu-0")
 *             .devicePlugin("nvidia.com/gpu", "GPU-1f2e3d4c")
 *             .done()
 *         .container("sidecar").done()
 *         .build();
 * }</pre>
 *
 * <p>The CDI quirk of real kubelets (later devices of one driver also carrying earlier devices' CDI
 * ids) is not reproduced: each device carries exactly the CDI ids given for it.
 */
public final class PodResourcesBuilder {

    private final String namespace;
    private final String name;
    private final List<ContainerBuilder> containers = new ArrayList<>();

    private PodResourcesBuilder(String namespace, String name) {
        this.namespace = Objects.requireNonNull(namespace, "namespace");
        this.name = Objects.requireNonNull(name, "name");
    }

    /**
     * @param namespace the pod namespace
     * @param name the pod name
     * @return a builder for that pod
     */
    public static PodResourcesBuilder pod(String namespace, String name) {
        return new PodResourcesBuilder(namespace, name);
    }

    /**
     * Starts a container; finish it with {@link ContainerBuilder#done()}.
     *
     * @param containerName the container name
     * @return the container builder
     */
    public ContainerBuilder container(String containerName) {
        ContainerBuilder container = new ContainerBuilder(this, containerName);
        containers.add(container);
        return container;
    }

    /** @return the PodResources message */
    public PodResources build() {
        PodResources.Builder pod = PodResources.newBuilder().setNamespace(namespace).setName(name);
        containers.forEach(c -> pod.addContainers(c.build()));
        return pod.build();
    }

    /** Builds one {@link ContainerResources}. */
    public static final class ContainerBuilder {
        private final PodResourcesBuilder parent;
        private final ContainerResources.Builder container;

        private ContainerBuilder(PodResourcesBuilder parent, String name) {
            this.parent = parent;
            this.container = ContainerResources.newBuilder().setName(Objects.requireNonNull(name, "name"));
        }

        /**
         * Adds a DRA device. Devices of the same claim (name and namespace) share one
         * {@code DynamicResource}, as the kubelet reports them.
         *
         * @param claimName the ResourceClaim object name (not the pod-level reference name)
         * @param claimNamespace the ResourceClaim namespace
         * @param driver the DRA driver name
         * @param pool the pool name
         * @param device the device name
         * @param cdiIds fully qualified CDI device names of this device, e.g. {@code vendor.com/gpu=gpu0}
         * @return this builder
         */
        public ContainerBuilder draDevice(String claimName, String claimNamespace, String driver, String pool,
                String device, String... cdiIds) {
            ClaimResource.Builder resource = ClaimResource.newBuilder()
                    .setDriverName(driver)
                    .setPoolName(pool)
                    .setDeviceName(device);
            Arrays.stream(cdiIds).forEach(id -> resource.addCdiDevices(CDIDevice.newBuilder().setName(id)));
            return addClaimResource(claimName, claimNamespace, resource.build());
        }

        /**
         * Adds a DRA device with a {@code share_id} (Kubernetes 1.35+, consumable capacity).
         *
         * @param claimName the ResourceClaim object name
         * @param claimNamespace the ResourceClaim namespace
         * @param driver the DRA driver name
         * @param pool the pool name
         * @param device the device name
         * @param shareId the share id
         * @return this builder
         */
        public ContainerBuilder sharedDraDevice(String claimName, String claimNamespace, String driver, String pool,
                String device, String shareId) {
            return addClaimResource(claimName, claimNamespace, ClaimResource.newBuilder()
                    .setDriverName(driver)
                    .setPoolName(pool)
                    .setDeviceName(device)
                    .setShareId(shareId)
                    .build());
        }

        /**
         * Adds a device-plugin (extended) resource.
         *
         * @param resourceName e.g. {@code nvidia.com/gpu}
         * @param deviceIds the plugin's device ids (GPU UUIDs for {@code nvidia.com/gpu})
         * @return this builder
         */
        public ContainerBuilder devicePlugin(String resourceName, String... deviceIds) {
            container.addDevices(ContainerDevices.newBuilder()
                    .setResourceName(resourceName)
                    .addAllDeviceIds(Arrays.asList(deviceIds)));
            return this;
        }

        /** @return the pod builder, to add more containers or build */
        public PodResourcesBuilder done() {
            return parent;
        }

        private ContainerBuilder addClaimResource(String claimName, String claimNamespace, ClaimResource resource) {
            for (DynamicResource.Builder existing : container.getDynamicResourcesBuilderList()) {
                if (existing.getClaimName().equals(claimName) && existing.getClaimNamespace().equals(claimNamespace)) {
                    existing.addClaimResources(resource);
                    return this;
                }
            }
            container.addDynamicResources(DynamicResource.newBuilder()
                    .setClaimName(claimName)
                    .setClaimNamespace(claimNamespace)
                    .addClaimResources(resource));
            return this;
        }

        private ContainerResources build() {
            return container.build();
        }
    }
}
