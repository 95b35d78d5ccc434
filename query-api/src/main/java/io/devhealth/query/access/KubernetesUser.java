package io.devhealth.query.access;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Who a caller is to Kubernetes, as a {@code TokenReview} returns it (or as the API server maps a client
 * certificate): what a {@code SubjectAccessReview} is asked about. Holds no credential.
 *
 * @param name e.g. {@code system:serviceaccount:ml:trainer}
 * @param uid empty when unknown
 * @param groups e.g. {@code system:serviceaccounts:ml}
 * @param extra e.g. {@code authentication.kubernetes.io/pod-name}
 */
public record KubernetesUser(String name, String uid, List<String> groups, Map<String, List<String>> extra) {

    public KubernetesUser {
        uid = uid == null ? "" : uid;
        groups = groups == null ? List.of() : List.copyOf(groups);
        Map<String, List<String>> copy = new TreeMap<>();
        if (extra != null) {
            extra.forEach((key, values) -> copy.put(key, values == null ? List.of() : List.copyOf(values)));
        }
        extra = java.util.Collections.unmodifiableMap(copy);
    }
}
