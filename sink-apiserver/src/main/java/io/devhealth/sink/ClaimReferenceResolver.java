package io.devhealth.sink;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import java.util.Optional;

/**
 * Maps a ResourceClaim object name (what PodResources reports) back to the pod-level claim
 * reference name (what {@code claim:<name>} entries use): directly through
 * {@code spec.resourceClaims[].resourceClaimName}, or for claims made from a template through
 * {@code status.resourceClaimStatuses[].resourceClaimName}.
 */
public final class ClaimReferenceResolver {

    private ClaimReferenceResolver() {}

    public static Optional<String> podClaimReference(Pod pod, String resourceClaimName) {
        if (pod.getSpec() != null && pod.getSpec().getResourceClaims() != null) {
            for (PodResourceClaim claim : pod.getSpec().getResourceClaims()) {
                if (resourceClaimName.equals(claim.getResourceClaimName())) {
                    return Optional.of(claim.getName());
                }
            }
        }
        if (pod.getStatus() != null && pod.getStatus().getResourceClaimStatuses() != null) {
            for (PodResourceClaimStatus status : pod.getStatus().getResourceClaimStatuses()) {
                if (resourceClaimName.equals(status.getResourceClaimName())) {
                    return Optional.of(status.getName());
                }
            }
        }
        return Optional.empty();
    }
}
