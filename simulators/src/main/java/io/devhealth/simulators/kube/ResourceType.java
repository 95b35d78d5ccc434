package io.devhealth.simulators.kube;

import java.util.List;
import java.util.Map;

/**
 * A kind of object a {@link FleetKubernetesApi} stores: where it is served, how discovery lists it,
 * and the few behaviours that differ between kinds.
 *
 * @param group API group, {@code ""} for core
 * @param version API version, e.g. {@code v1alpha1}
 * @param plural the resource name in URLs, e.g. {@code devicepostmortems}
 * @param singular e.g. {@code devicepostmortem}
 * @param kind e.g. {@code DevicePostMortem}
 * @param namespaced whether objects live in a namespace
 * @param statusSubresource whether {@code status} is a subresource: then status given on create is
 *     dropped (replaced by {@code initialStatus}), the main resource never changes it and
 *     {@code .../status} changes nothing else, as on a real API server
 * @param initialStatus the status a created object gets when {@code statusSubresource}; null for none
 * @param fields field selectors beyond {@code metadata.name} and {@code metadata.namespace}, each with
 *     its path in the object (e.g. {@code status.phase} → {@code [status, phase]})
 * @param shortNames for kubectl, e.g. {@code po}
 * @param inCategoryAll whether {@code kubectl get all} lists it
 */
record ResourceType(String group, String version, String plural, String singular, String kind, boolean namespaced,
                    boolean statusSubresource, Map<String, String> initialStatus, Map<String, List<String>> fields,
                    List<String> shortNames, boolean inCategoryAll) {

    static final ResourceType PODS = new ResourceType("", "v1", "pods", "pod", "Pod", true, true, Map.of("phase", "Pending"),
            Map.of("status.phase", List.of("status", "phase"), "spec.nodeName", List.of("spec", "nodeName")), List.of("po"), true);

    /** Stored for the printer columns of the kinds they define (ServerTables); they define no new kind here. */
    static final ResourceType CRDS = plain("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false,
            List.of("crd", "crds"));

    /**
     * Every kind served besides pods and Events (which have stores of their own): core kinds the demo
     * and tests touch, DRA's {@code resource.k8s.io/v1}, and devhealth's own {@code devhealth.io/v1alpha1}
     * DevicePostMortem, which the sink writes.
     */
    static final List<ResourceType> GENERIC = List.of(
            plain("", "v1", "namespaces", "Namespace", false, List.of("ns")),
            new ResourceType("", "v1", "nodes", "node", "Node", false, true, null, Map.of(), List.of("no"), false),
            plain("", "v1", "configmaps", "ConfigMap", true, List.of("cm")),
            new ResourceType("", "v1", "services", "service", "Service", true, true, null, Map.of(), List.of("svc"), true),
            new ResourceType("resource.k8s.io", "v1", "resourceclaims", "resourceclaim", "ResourceClaim", true, true, null, Map.of(),
                    List.of(), false),
            plain("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate", true, List.of()),
            plain("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", false, List.of()),
            plain("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", false, List.of()),
            // No status subresource: the record keeps everything in spec (sink-apiserver's DevicePostMortem).
            plain("devhealth.io", "v1alpha1", "devicepostmortems", "DevicePostMortem", true, List.of("dpm")),
            CRDS);

    private static ResourceType plain(String group, String version, String plural, String kind, boolean namespaced,
                                      List<String> shortNames) {
        return new ResourceType(group, version, plural, kind.toLowerCase(java.util.Locale.ROOT), kind, namespaced, false, null,
                Map.of(), shortNames, false);
    }

    /** @return {@code v1} for core, else {@code group/version}: the objects' {@code apiVersion} */
    String apiVersion() {
        return group.isEmpty() ? version : group + "/" + version;
    }

    /** @return where the kind's URLs start: {@code /api/v1} or {@code /apis/<group>/<version>} */
    String basePath() {
        return group.isEmpty() ? "/api/" + version : "/apis/" + group + "/" + version;
    }
}
