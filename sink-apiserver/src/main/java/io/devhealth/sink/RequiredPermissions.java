package io.devhealth.sink;

import java.util.List;
import java.util.Set;

/**
 * Every Kubernetes API permission the sink's code uses, declared once; the RBAC manifest
 * {@code k8s/base/sink-apiserver/rbac.yaml} must grant exactly these (a test compares them).
 * <ul>
 *   <li>{@code pods get}: {@link PodStatusWriter} reads the pod before every write;</li>
 *   <li>{@code pods list, watch}: {@link TerminatedPodWatcher}'s informer on Succeeded/Failed pods;</li>
 *   <li>{@code pods/status patch}: the JSON Patch of {@code allocatedResourcesStatus} and the conditions
 *       (no {@code update}: the sink never sends a whole object; no {@code pods patch}: it never touches
 *       spec or metadata);</li>
 *   <li>{@code events create}: {@link PodEventRecorder}.</li>
 * </ul>
 */
public final class RequiredPermissions {

    /** One rule: API group ("" for core), resource (with subresource), verbs. */
    public record Permission(String apiGroup, String resource, Set<String> verbs) {
    }

    public static final List<Permission> ALL = List.of(
            new Permission("", "pods", Set.of("get", "list", "watch")),
            new Permission("", "pods/status", Set.of("patch")),
            new Permission("", "events", Set.of("create")));

    private RequiredPermissions() {}
}
