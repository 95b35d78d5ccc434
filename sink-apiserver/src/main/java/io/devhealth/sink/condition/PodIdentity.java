package io.devhealth.sink.condition;

import io.devhealth.schema.avro.ClaimDeviceStatus;
import io.devhealth.schema.avro.ContainerDeviceStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.sink.ClaimReferenceResolver;
import io.fabric8.kubernetes.api.model.Pod;

/**
 * Whether a device status is about this very pod, and not an earlier pod of the same name (a
 * StatefulSet pod, a Job retry with a fixed name). Statuses are keyed by namespace/name, and the pod's
 * UID is often unknown to them (PodResources reports none), so three checks: the UID where the status
 * carries one, the node the status comes from against the node the pod is bound to (which also keeps
 * one node from writing to pods of another), and every
 * ResourceClaim the status names against the claims the pod references (claims made from a template are
 * new for every pod).
 */
final class PodIdentity {

    private PodIdentity() {}

    /** Null when {@code status} may be written to {@code pod}; otherwise why not. */
    static String mismatch(Pod pod, PodDeviceStatus status) {
        String uid = status.getPod().getUid();
        if (uid != null && !uid.isEmpty() && !uid.equals(pod.getMetadata().getUid())) {
            return "uid " + uid + " is not the pod's " + pod.getMetadata().getUid();
        }
        // The binding is the API server's: the scheduler sets spec.nodeName through pods/binding, and
        // NodeRestriction keeps a node's kubelet from changing it. A status that names no node, or a pod
        // bound to none (it cannot have been given devices), is never written: otherwise whoever can write
        // pod-device-status, or one compromised node, could set the condition of any pod in the cluster.
        String boundTo = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
        if (status.getNode().isEmpty()) {
            return "the status names no node";
        }
        if (boundTo == null || boundTo.isEmpty()) {
            return "the pod is bound to no node, node " + status.getNode() + " cannot hold its devices";
        }
        if (!boundTo.equals(status.getNode())) {
            return "node " + status.getNode() + " is not the pod's " + boundTo;
        }
        for (ContainerDeviceStatus container : status.getContainers()) {
            for (ClaimDeviceStatus claim : container.getClaims()) {
                if (!pod.getMetadata().getNamespace().equals(claim.getClaimNamespace())
                        || ClaimReferenceResolver.podClaimReference(pod, claim.getClaimName()).isEmpty()) {
                    return "claim " + claim.getClaimNamespace() + "/" + claim.getClaimName() + " is not one the pod references";
                }
            }
        }
        return null;
    }

    static boolean matches(Pod pod, PodDeviceStatus status) {
        return status != null && mismatch(pod, status) == null;
    }
}
