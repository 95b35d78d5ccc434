package io.devhealth.query.http;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * What a query needs the caller to hold in Kubernetes RBAC, asked as a {@code SubjectAccessReview}'s
 * resource attributes; shown to a caller who lacks it (a 403 names the missing permission).
 *
 * @param verb always {@code get}: every query reads
 * @param group the API group, {@code ""} for the core group
 * @param resource {@code pods} or {@code nodes}
 * @param namespace the pod's namespace; null for nodes (cluster scope)
 * @param name the pod or node; null when a query spans every node (the fleet summary), which then needs
 *        {@code get} on all nodes: a role restricted by {@code resourceNames} does not grant it
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Permission(String verb, String group, String resource, String namespace, String name) {

    /**
     * A pod's device health is what its status already shows ({@code allocatedResourcesStatus}, devhealth's
     * {@code devhealth.io/DevicesHealthy} condition) and its history: whoever may {@code get} the pod may read
     * it, since reading a pod returns its status. That is what a user investigating a failed job holds: the
     * {@code view}, {@code edit} and {@code admin} roles grant it in their namespaces (upstream
     * plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go, {@code system:aggregate-to-view}), and so does
     * any hand-written role that lets its holder {@code kubectl get pod}. {@code pods/status} would refuse such
     * a role for no gain; devhealth's {@code devicepostmortems} exist only for ended pods, and no built-in role
     * grants them.
     */
    public static Permission pod(String namespace, String name) {
        return new Permission("get", "", "pods", namespace, name);
    }

    /** A node's devices and their history describe the node: {@code get} on it, as {@code kubectl get node} needs. */
    public static Permission node(String name) {
        return new Permission("get", "", "nodes", null, name);
    }

    /** The fleet summary counts every node's transitions: {@code get} on nodes without a name, i.e. on all of them. */
    public static Permission allNodes() {
        return new Permission("get", "", "nodes", null, null);
    }

    /** As the API server words a refusal: {@code get pods "train-0" in namespace "ml"}. */
    public String describe() {
        return verb + " " + resource + (name == null ? "" : " \"" + name + "\"")
                + (namespace == null ? " (cluster scope)" : " in namespace \"" + namespace + "\"");
    }
}
