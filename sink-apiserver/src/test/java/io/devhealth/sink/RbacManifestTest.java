package io.devhealth.sink;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.sink.postmortem.DevicePostMortem;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The RBAC manifest grants exactly what {@link RequiredPermissions} says the code uses: no more, no less. */
class RbacManifestTest {

    private static final Path MANIFEST = Path.of("..", "k8s", "base", "sink-apiserver", "rbac.yaml");
    private static final Path TAINT_RULES_MANIFEST = Path.of("..", "k8s", "components", "device-taint-rules", "rbac.yaml");

    private List<HasMetadata> load() throws Exception {
        return load(MANIFEST);
    }

    private static List<HasMetadata> load(Path manifest) throws Exception {
        try (InputStream in = Files.newInputStream(manifest)) {
            Object parsed = new KubernetesSerialization().unmarshal(in);
            @SuppressWarnings("unchecked")
            List<HasMetadata> items = parsed instanceof List<?> list ? (List<HasMetadata>) list : List.of((HasMetadata) parsed);
            return items;
        }
    }

    /** "group|resource" → verbs, for every (group, resource) pair a rule names. */
    private static Map<String, Set<String>> flatten(List<PolicyRule> rules) {
        Map<String, Set<String>> granted = new HashMap<>();
        for (PolicyRule rule : rules) {
            assertThat(rule.getResourceNames()).as("no resourceNames: pods are not known in advance").isNullOrEmpty();
            for (String group : rule.getApiGroups()) {
                for (String resource : rule.getResources()) {
                    granted.computeIfAbsent(group + "|" + resource, k -> new HashSet<>()).addAll(rule.getVerbs());
                }
            }
        }
        return granted;
    }

    @Test
    void shouldGrantExactlyTheVerbsTheCodeUses() throws Exception {
        ClusterRole role = load().stream().filter(ClusterRole.class::isInstance).map(ClusterRole.class::cast).findFirst().orElseThrow();

        Map<String, Set<String>> required = new HashMap<>();
        RequiredPermissions.ALL.forEach(p -> required.computeIfAbsent(p.apiGroup() + "|" + p.resource(), k -> new HashSet<>())
                .addAll(p.verbs()));
        assertThat(flatten(role.getRules())).isEqualTo(required);
    }

    @Test
    void shouldHaveNoWildcardsAndNoWritesBeyondStatusEventsAndItsOwnRecords() throws Exception {
        ClusterRole role = load().stream().filter(ClusterRole.class::isInstance).map(ClusterRole.class::cast).findFirst().orElseThrow();

        flatten(role.getRules()).forEach((resource, verbs) -> {
            assertThat(resource).doesNotContain("*");
            assertThat(verbs).doesNotContain("*", "deletecollection", "update", "escalate", "bind", "impersonate");
            if (!resource.equals(DevicePostMortem.GROUP + "|" + DevicePostMortem.PLURAL)) {
                assertThat(verbs).as(resource + ": the sink deletes only its own records").doesNotContain("delete");
            }
            if (!resource.equals("|events") && !resource.equals(DevicePostMortem.GROUP + "|" + DevicePostMortem.PLURAL)) {
                assertThat(verbs).as(resource + ": the sink creates only events and its own records").doesNotContain("create");
            }
            if (resource.startsWith("resource.k8s.io|")) {
                assertThat(verbs).as("claims are read, never written").containsOnly("get");
            }
            if (resource.equals("|pods")) {
                assertThat(verbs).as("spec and metadata of pods are not ours").doesNotContain("patch", "create");
            }
        });
    }

    @Test
    void shouldBindTheRoleToTheSinksServiceAccount() throws Exception {
        List<HasMetadata> items = load();
        ServiceAccount account = items.stream().filter(ServiceAccount.class::isInstance).map(ServiceAccount.class::cast).findFirst().orElseThrow();
        ClusterRoleBinding binding = items.stream().filter(ClusterRoleBinding.class::isInstance).map(ClusterRoleBinding.class::cast)
                .findFirst().orElseThrow();
        ClusterRole role = items.stream().filter(ClusterRole.class::isInstance).map(ClusterRole.class::cast).findFirst().orElseThrow();

        assertThat(binding.getRoleRef().getKind()).isEqualTo("ClusterRole");
        assertThat(binding.getRoleRef().getName()).isEqualTo(role.getMetadata().getName());
        assertThat(binding.getSubjects()).singleElement().satisfies(subject -> {
            assertThat(subject.getKind()).isEqualTo("ServiceAccount");
            assertThat(subject.getName()).isEqualTo(account.getMetadata().getName());
            assertThat(subject.getNamespace()).isEqualTo(account.getMetadata().getNamespace());
        });
    }

    @Test
    void shouldGrantRetryElsewhereExactlyWhatItUsesInItsOwnComponentOnly() throws Exception {
        List<HasMetadata> items = load(TAINT_RULES_MANIFEST);
        ClusterRole role = items.stream().filter(ClusterRole.class::isInstance).map(ClusterRole.class::cast).findFirst().orElseThrow();
        Map<String, Set<String>> required = new HashMap<>();
        RequiredPermissions.TAINT_RULES.forEach(p -> required.computeIfAbsent(p.apiGroup() + "|" + p.resource(), k -> new HashSet<>())
                .addAll(p.verbs()));

        Map<String, Set<String>> granted = flatten(role.getRules());
        assertThat(granted).isEqualTo(required);
        granted.forEach((resource, verbs) -> {
            assertThat(verbs).doesNotContain("*", "deletecollection", "update", "patch", "escalate", "bind", "impersonate");
            if (!resource.equals("resource.k8s.io|devicetaintrules")) {
                assertThat(verbs).as(resource + " is only read").containsAnyOf("get", "list").doesNotContain("create", "delete");
            }
        });
        ClusterRole base = load().stream().filter(ClusterRole.class::isInstance).map(ClusterRole.class::cast).findFirst().orElseThrow();
        assertThat(flatten(base.getRules())).as("the base role grants none of it").doesNotContainKeys(required.keySet().toArray(String[]::new));

        ClusterRoleBinding binding = items.stream().filter(ClusterRoleBinding.class::isInstance).map(ClusterRoleBinding.class::cast)
                .findFirst().orElseThrow();
        ServiceAccount account = load().stream().filter(ServiceAccount.class::isInstance).map(ServiceAccount.class::cast).findFirst()
                .orElseThrow();
        assertThat(binding.getRoleRef().getName()).isEqualTo(role.getMetadata().getName());
        assertThat(binding.getSubjects()).singleElement().satisfies(subject -> {
            assertThat(subject.getName()).isEqualTo(account.getMetadata().getName());
            assertThat(subject.getNamespace()).isEqualTo(account.getMetadata().getNamespace());
        });
    }
}
