package io.devhealth.sink;

import io.devhealth.sink.condition.PodCache;
import io.devhealth.sink.condition.PodEventRecorder;
import io.devhealth.sink.condition.PodStatusWriter;
import io.devhealth.sink.postmortem.ClaimAllocations;
import io.devhealth.sink.postmortem.DevicePostMortem;
import io.devhealth.sink.postmortem.PostMortemStore;
import java.util.List;
import java.util.Set;

/**
 * Every Kubernetes API permission the sink's code uses, declared once; the RBAC manifest
 * {@code k8s/base/sink-apiserver/rbac.yaml} must grant exactly these (a test compares them).
 * <ul>
 *   <li>{@code pods get}: {@link PodStatusWriter} reads a pod its cache lacks, a terminated pod, and a pod
 *       whose write failed or whose cached copy says nothing is to be written;</li>
 *   <li>{@code pods list, watch}: {@link PodCache}'s informer on every pod, which the writer reads and
 *       {@link TerminatedPodWatcher} listens to;</li>
 *   <li>{@code pods/status patch}: the JSON Patch of devhealth's own pod conditions, nothing else
 *       (no {@code update}: the sink never sends a whole object; no {@code pods patch}: it never touches
 *       spec or metadata);</li>
 *   <li>{@code events create}: {@link PodEventRecorder};</li>
 *   <li>{@code resource.k8s.io resourceclaims get}: {@link ClaimAllocations} reads which request each
 *       device was allocated for (PodResources does not say);</li>
 *   <li>{@code devhealth.io devicepostmortems create, get, list, patch, delete}: {@link PostMortemStore}
 *       (get before each write, create or JSON Patch, list and delete for the retention sweep; no
 *       {@code update} and no {@code watch}).</li>
 * </ul>
 * Retry elsewhere ({@code taint.rules.enabled}) needs {@link #TAINT_RULES} besides, granted by the optional
 * component {@code k8s/components/device-taint-rules/rbac.yaml} and not by the base role:
 * <ul>
 *   <li>{@code resource.k8s.io devicetaintrules get, list, create, delete}: {@link io.devhealth.sink.taints.KubernetesTaintRules}
 *       lists its own rules (start, assignment, caps, breaker), creates one per device, reads an existing one
 *       back on AlreadyExists and deletes it on recovery (no {@code watch}: it lists when it decides);</li>
 *   <li>{@code resource.k8s.io resourceslices get, list}: whether the device's driver tainted it already;</li>
 *   <li>{@code nodes list}: the cluster's size, for the fleet circuit breaker.</li>
 * </ul>
 */
public final class RequiredPermissions {

    /** One rule: API group ("" for core), resource (with subresource), verbs. */
    public record Permission(String apiGroup, String resource, Set<String> verbs) {
    }

    public static final List<Permission> ALL = List.of(
            new Permission("", "pods", Set.of("get", "list", "watch")),
            new Permission("", "pods/status", Set.of("patch")),
            new Permission("", "events", Set.of("create")),
            new Permission("resource.k8s.io", "resourceclaims", Set.of("get")),
            new Permission(DevicePostMortem.GROUP, DevicePostMortem.PLURAL, Set.of("create", "get", "list", "patch", "delete")));

    public static final List<Permission> TAINT_RULES = List.of(
            new Permission("resource.k8s.io", "devicetaintrules", Set.of("get", "list", "create", "delete")),
            new Permission("resource.k8s.io", "resourceslices", Set.of("get", "list")),
            new Permission("", "nodes", Set.of("list")));

    private RequiredPermissions() {}
}
