package io.devhealth.sink.realkube;

import io.devhealth.schema.avro.ClaimDeviceStatus;
import io.devhealth.schema.avro.ContainerDeviceStatus;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.DeviceStatus;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.PodRef;
import io.devhealth.simulators.realkube.RealNode;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;
import java.util.List;

/** The sink's input for a pod on the real node, as the processor would make it, for tests that drive the sink directly. */
final class RealPodStatuses {

    private RealPodStatuses() {}

    /** The ResourceClaim made for {@code pod} from its template (owned by the pod). */
    static ResourceClaim claimOf(KubernetesClient admin, String namespace, String pod) {
        String uid = admin.pods().inNamespace(namespace).withName(pod).get().getMetadata().getUid();
        return admin.resources(ResourceClaim.class).inNamespace(namespace).list().getItems().stream()
                .filter(c -> c.getMetadata().getOwnerReferences().stream().anyMatch(o -> o.getUid().equals(uid)))
                .findFirst().orElseThrow();
    }

    /** What the processor would emit for the pod: one device of its claim, with no UID (PodResources has none). */
    static PodDeviceStatus status(RealNode node, String namespace, String pod, ResourceClaim claim, String device,
                                  HealthStatus health, String message, Instant since, long version) {
        DeviceStatus status = DeviceStatus.newBuilder()
                .setDevice(DeviceRef.newBuilder().setDriver(RealNode.DRIVER_NAME).setPool(node.name()).setDevice(device).build())
                .setResourceId(RealNode.DRIVER_NAME + "/" + node.name() + "/" + device)
                .setHealth(health)
                .setMessage(message)
                .setSince(since)
                .build();
        return PodDeviceStatus.newBuilder()
                .setPod(new PodRef(namespace, pod, null))
                .setNode(node.name())
                .setVersion(version)
                .setUpdatedAt(since)
                .setSummary(health)
                .setContainers(List.of(ContainerDeviceStatus.newBuilder().setName("main")
                        .setClaims(List.of(new ClaimDeviceStatus(claim.getMetadata().getName(), namespace, List.of(status))))
                        .build()))
                .build();
    }
}
