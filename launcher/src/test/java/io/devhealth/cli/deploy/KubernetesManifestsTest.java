package io.devhealth.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.simulators.realkube.KubeBinaries;
import io.devhealth.testkit.realkube.Kustomize;
import io.devhealth.testkit.realkube.RealKubernetesExtension;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import java.lang.reflect.Method;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Renders k8s/ with the real {@code kubectl kustomize} and validates every object against the
 * fabric8 model: a field the model does not know (a typo, a wrong nesting level) is an error, and the
 * workloads are checked for what operators rely on (probes, resources, non-root, read-only root,
 * settings the services actually read).
 */
@ExtendWith(RealKubernetesExtension.class)
class KubernetesManifestsTest {

    private static final Set<String> CUSTOM_RESOURCE_GROUPS = Set.of("monitoring.coreos.com/v1");
    private static List<HasMetadata> objects;

    @BeforeAll
    static void render(KubeBinaries kube) {
        objects = Kustomize.render(kube, Path.of("..", "k8s"));
    }

    private static <T> T one(Class<T> type, String name) {
        return objects.stream().filter(type::isInstance).map(type::cast)
                .filter(o -> ((HasMetadata) o).getMetadata().getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " " + name));
    }

    @Test
    void shouldRenderEveryKindOperatorsNeed() {
        Set<String> kinds = objects.stream().map(HasMetadata::getKind).collect(Collectors.toSet());
        assertThat(kinds).contains("Namespace", "DaemonSet", "StatefulSet", "Deployment", "ServiceAccount", "ClusterRole",
                "ClusterRoleBinding", "NetworkPolicy", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "PodDisruptionBudget", "FlowSchema", "PriorityLevelConfiguration",
                "ConfigMap", "Service", "PodMonitor", "PrometheusRule");
    }

    @Test
    void shouldOnlyContainFieldsTheKubernetesModelKnows() {
        for (HasMetadata object : objects) {
            if (object instanceof GenericKubernetesResource) {
                assertThat(CUSTOM_RESOURCE_GROUPS).as("only known custom resources are untyped: " + object.getKind())
                        .contains(object.getApiVersion());
                continue;
            }
            assertThat(unknownFields(object, object.getKind() + "/" + object.getMetadata().getName()))
                    .as("fields the model does not know").isEmpty();
            assertThat(object.getMetadata().getNamespace()).as(object.getKind() + " namespace").isIn(null, "devhealth", "devhealth-node");
        }
    }

    @Test
    void shouldRunEveryWorkloadPinnedProbedBoundedAndLocked() {
        Map<String, PodSpec> workloads = Map.of(
                "collector", one(DaemonSet.class, "node-collector").getSpec().getTemplate().getSpec(),
                "processor", one(StatefulSet.class, "stream-processor").getSpec().getTemplate().getSpec(),
                "sink", one(Deployment.class, "sink-apiserver").getSpec().getTemplate().getSpec());
        Map<String, String> namespaces = Map.of("collector", "devhealth-node", "processor", "devhealth", "sink", "devhealth");
        assertThat(workloads.values().stream().map(p -> p.getContainers().get(0).getImage()).distinct()).as("one image").hasSize(1);
        workloads.forEach((subcommand, pod) -> {
            Container container = pod.getContainers().get(0);
            assertThat(pod.getSecurityContext().getSeccompProfile().getType()).as(subcommand + " seccomp").isEqualTo("RuntimeDefault");
            assertThat(container.getEnvFrom()).as(subcommand + " reads ConfigMaps of its own namespace").allSatisfy(from ->
                    assertThat(objects).anySatisfy(o -> {
                        assertThat(o.getKind()).isEqualTo("ConfigMap");
                        assertThat(o.getMetadata().getName()).isEqualTo(from.getConfigMapRef().getName());
                        assertThat(o.getMetadata().getNamespace()).isEqualTo(namespaces.get(subcommand));
                    }));
            assertThat(container.getImage()).as(subcommand + " image").matches("ghcr.io/devhealth/devhealth:\\d+\\.\\d+\\.\\d+");
            assertThat(container.getArgs()).as(subcommand + " args").containsExactly(subcommand);
            assertThat(container.getReadinessProbe()).as(subcommand + " readiness").isNotNull();
            assertThat(container.getLivenessProbe()).as(subcommand + " liveness").isNotNull();
            assertThat(container.getResources().getRequests()).as(subcommand + " requests").containsKeys("cpu", "memory");
            assertThat(container.getResources().getLimits()).as(subcommand + " limits").containsKey("memory");
            assertThat(container.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
            assertThat(container.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
            assertThat(container.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
            Set<String> env = container.getEnv().stream().map(EnvVar::getName).collect(Collectors.toSet());
            env.addAll(configMapKeys("devhealth-kafka"));
            assertThat(ServiceEnvironment.unknownVariables(subcommand, env)).as(subcommand + " settings it would ignore").isEmpty();
            assertThat(ServiceEnvironment.missingRequired(subcommand, env)).as(subcommand + " required settings").isEmpty();
        });
        assertThat(workloads.get("processor").getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(workloads.get("sink").getSecurityContext().getRunAsNonRoot()).isTrue();
    }

    @Test
    @SuppressWarnings("unchecked")
    void shouldScrapeEveryComponentOnceKeepingTheDevicesPodLabels() {
        List<GenericKubernetesResource> monitors = objects.stream().filter(GenericKubernetesResource.class::isInstance)
                .map(GenericKubernetesResource.class::cast)
                .filter(o -> o.getKind().equals("PodMonitor") || o.getKind().equals("ServiceMonitor")).toList();
        assertThat(monitors).as("one monitor: two would scrape a pod twice and double every sum").singleElement()
                .satisfies(monitor -> assertThat(monitor.getKind()).isEqualTo("PodMonitor"));
        Map<String, Object> spec = (Map<String, Object>) monitors.get(0).getAdditionalProperties().get("spec");
        List<Map<String, Object>> selected = (List<Map<String, Object>>) ((Map<String, Object>) spec.get("selector")).get("matchExpressions");
        assertThat((List<String>) selected.get(0).get("values")).containsExactlyInAnyOrder("node-collector", "stream-processor", "sink-apiserver");
        List<Map<String, Object>> endpoints = (List<Map<String, Object>>) spec.get("podMetricsEndpoints");
        assertThat(endpoints).singleElement().satisfies(endpoint -> assertThat(endpoint)
                .containsEntry("port", "http").containsEntry("path", "/metrics").containsEntry("honorLabels", true));
    }

    @Test
    void shouldMountOnlyTheKubeletSocketsTheCollectorReadsAndGetTheGpusFromTheNvidiaRuntime() {
        DaemonSet collector = one(DaemonSet.class, "node-collector");
        PodSpec pod = collector.getSpec().getTemplate().getSpec();
        Map<String, io.fabric8.kubernetes.api.model.HostPathVolumeSource> hostPaths = pod.getVolumes().stream()
                .filter(v -> v.getHostPath() != null).collect(Collectors.toMap(v -> v.getName(), v -> v.getHostPath()));
        assertThat(hostPaths.values()).extracting(h -> h.getPath()).containsExactlyInAnyOrder("/var/lib/kubelet/plugins_registry",
                "/var/lib/kubelet/pod-resources", "/var/lib/kubelet/plugins/gpu.nvidia.com", "/var/lib/devhealth/spool");
        // The kubelet's directories must exist: a created one would hide a wrong path.
        assertThat(hostPaths.values()).filteredOn(h -> h.getPath().startsWith("/var/lib/kubelet/plugins_registry")
                || h.getPath().startsWith("/var/lib/kubelet/pod-resources")).allSatisfy(h -> assertThat(h.getType()).isEqualTo("Directory"));
        Container container = pod.getContainers().get(0);
        assertThat(container.getVolumeMounts()).allSatisfy(m -> {
            if (hostPaths.containsKey(m.getName())) {
                assertThat(m.getMountPath()).as("at its host path").isEqualTo(hostPaths.get(m.getName()).getPath());
                assertThat(m.getReadOnly()).as(m.getName() + " read-only").isEqualTo(m.getName().equals("spool") ? null : Boolean.TRUE);
            }
        });
        assertThat(pod.getRuntimeClassName()).isEqualTo("nvidia");
        Map<String, String> env = container.getEnv().stream().filter(e -> e.getValue() != null)
                .collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
        assertThat(env).containsEntry("NVIDIA_VISIBLE_DEVICES", "all").containsEntry("NVIDIA_DRIVER_CAPABILITIES", "utility")
                .containsEntry("DEVHEALTH_DRA_PLUGINS_DIR", "/var/lib/kubelet/plugins").doesNotContainKey("DEVHEALTH_NVML_LIBRARY_PATH");
        assertThat(pod.getTolerations()).anySatisfy(t -> assertThat(t.getKey()).isEqualTo("nvidia.com/gpu"));
    }

    @Test
    void shouldRunTheCollectorAloneInAPrivilegedNamespaceAndEverythingElseRestricted() {
        Map<String, String> enforce = objects.stream().filter(o -> o.getKind().equals("Namespace"))
                .collect(Collectors.toMap(o -> o.getMetadata().getName(), o -> o.getMetadata().getLabels().get("pod-security.kubernetes.io/enforce")));
        assertThat(enforce).containsExactlyInAnyOrderEntriesOf(Map.of("devhealth", "restricted", "devhealth-node", "privileged"));
        assertThat(objects).filteredOn(o -> "devhealth-node".equals(o.getMetadata().getNamespace()))
                .extracting(o -> o.getKind() + "/" + o.getMetadata().getName().replaceAll("-[a-z0-9]{10}$", ""))
                .containsExactlyInAnyOrder("DaemonSet/node-collector", "ServiceAccount/node-collector", "NetworkPolicy/node-collector",
                        "NetworkPolicy/default-deny", "ConfigMap/devhealth-kafka");
        assertThat(one(io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding.class, "devhealth-node-collector").getSubjects())
                .singleElement().satisfies(s -> assertThat(s.getNamespace()).isEqualTo("devhealth-node"));
    }

    /**
     * The Secrets a pod in the collectors' namespace may name, each holding no private key: whatever a pod
     * there names, a compromised GPU node's kubelet can read whole. The collector's own SCRAM credential
     * (which the node holds anyway); Strimzi's {@code <cluster>-cluster-ca-cert}, the cluster CA's public
     * certificate with a PKCS12 copy of it and that file's password (the CA's key is in
     * {@code <cluster>-cluster-ca}, which nothing here names); the registry's CA certificate and read-only
     * credentials. Everything else a collector needs comes as a ConfigMap (the query CA's certificate) or
     * a projected ServiceAccount token.
     */
    static final Set<String> COLLECTOR_SECRETS = Set.of("devhealth-collector", "kafka-cluster-ca-cert", "devhealth-schema-registry");

    @Test
    void shouldNameNoSecretInTheCollectorsNamespaceThatCouldHoldAPrivateKey() {
        Map<String, PodSpec> pods = PodSecrets.podSpecs(objects, "devhealth-node");
        assertThat(pods).as("pod templates of devhealth-node").containsKey("DaemonSet/node-collector");
        pods.forEach((workload, pod) -> {
            assertThat(PodSecrets.referenced(pod)).as(workload + ": Secrets its node's kubelet may read").isSubsetOf(COLLECTOR_SECRETS);
            assertThat(PodSecrets.volumesThatCouldHideASecret(pod)).as(workload + ": volumes of an unknown kind").isEmpty();
        });
        // The init container's --cacert is a file of a ConfigMap: the query CA's certificate without its key.
        PodSpec collector = pods.get("DaemonSet/node-collector");
        Container init = collector.getInitContainers().stream().filter(c -> c.getName().equals("node-key")).findFirst().orElseThrow();
        String caFile = init.getArgs().get(init.getArgs().indexOf("--cacert") + 1);
        io.fabric8.kubernetes.api.model.VolumeMount mount = init.getVolumeMounts().stream()
                .filter(m -> caFile.startsWith(m.getMountPath() + "/")).findFirst().orElseThrow();
        io.fabric8.kubernetes.api.model.Volume volume = collector.getVolumes().stream().filter(v -> v.getName().equals(mount.getName()))
                .findFirst().orElseThrow();
        assertThat(volume.getConfigMap()).as(mount.getName() + " is a ConfigMap").isNotNull();
        assertThat(volume.getConfigMap().getItems()).singleElement().satisfies(item -> {
            assertThat(item.getKey()).isEqualTo("ca.crt");
            assertThat(mount.getMountPath() + "/" + item.getPath()).isEqualTo(caFile);
        });
    }

    @Test
    void shouldKeepTheProcessorAndTheSinkOffEveryNodeTheCollectorRunsOn() {
        PodSpec collector = one(DaemonSet.class, "node-collector").getSpec().getTemplate().getSpec();
        Map<String, String> gpuNode = collector.getNodeSelector();
        assertThat(gpuNode).as("the collector selects its nodes by label").isNotEmpty();
        assertThat(collector.getAffinity()).as("and by nothing else, so that the label alone says what a GPU node is").isNull();
        Map<String, PodSpec> trusted = Map.of(
                "processor", one(StatefulSet.class, "stream-processor").getSpec().getTemplate().getSpec(),
                "sink", one(Deployment.class, "sink-apiserver").getSpec().getTemplate().getSpec());
        trusted.forEach((workload, pod) -> {
            assertThat(pod.getNodeSelector()).as(workload + " nodeSelector").isNullOrEmpty();
            List<io.fabric8.kubernetes.api.model.NodeSelectorTerm> terms = pod.getAffinity().getNodeAffinity()
                    .getRequiredDuringSchedulingIgnoredDuringExecution().getNodeSelectorTerms();
            assertThat(terms).as(workload + ": a required node affinity").isNotEmpty();
            // Terms are ORed: each must refuse the collector's label on its own, whatever else a node carries.
            assertThat(terms).as(workload).allSatisfy(term -> {
                assertThat(term.getMatchFields()).isNullOrEmpty();
                assertThat(term.getMatchExpressions()).as("an expression on the collector's label that a GPU node fails")
                        .anySatisfy(e -> {
                            assertThat(gpuNode).containsKey(e.getKey());
                            assertThat(nodeMatches(List.of(e), gpuNode)).isFalse();
                        });
            });
            assertThat(terms).as(workload + " schedulable on a node without the label")
                    .anySatisfy(term -> assertThat(nodeMatches(term.getMatchExpressions(), Map.of("kubernetes.io/os", "linux"))).isTrue());
        });
    }

    /** Whether a node with {@code labels} satisfies every requirement, as the scheduler reads them (an absent label fails In and Exists only). */
    private static boolean nodeMatches(List<io.fabric8.kubernetes.api.model.NodeSelectorRequirement> requirements, Map<String, String> labels) {
        return requirements.stream().allMatch(r -> {
            String value = labels.get(r.getKey());
            return switch (r.getOperator()) {
                case "In" -> value != null && r.getValues().contains(value);
                case "NotIn" -> value == null || !r.getValues().contains(value);
                case "Exists" -> value != null;
                case "DoesNotExist" -> value == null;
                default -> throw new AssertionError("operator not evaluated here: " + r.getOperator());
            };
        });
    }

    @Test
    void shouldKeepProcessorStateOnAPersistentVolume() {
        StatefulSet processor = one(StatefulSet.class, "stream-processor");
        assertThat(processor.getSpec().getVolumeClaimTemplates()).extracting(c -> c.getMetadata().getName()).containsExactly("state");
        assertThat(processor.getSpec().getTemplate().getSpec().getContainers().get(0).getVolumeMounts())
                .anySatisfy(m -> assertThat(m.getName()).isEqualTo("state"));
    }

    /** The namespace of each workload of {@link #podLabels()}. */
    private static String namespaceOf(String workload) {
        return workload.equals("node-collector") ? "devhealth-node" : "devhealth";
    }

    /** Every pod the manifests run, by workload, with its template's labels. */
    private static Map<String, Map<String, String>> podLabels() {
        return Map.of(
                "node-collector", one(DaemonSet.class, "node-collector").getSpec().getTemplate().getMetadata().getLabels(),
                "stream-processor", one(StatefulSet.class, "stream-processor").getSpec().getTemplate().getMetadata().getLabels(),
                "sink-apiserver", one(Deployment.class, "sink-apiserver").getSpec().getTemplate().getMetadata().getLabels());
    }

    private static List<NetworkPolicy> networkPolicies() {
        return objects.stream().filter(NetworkPolicy.class::isInstance).map(NetworkPolicy.class::cast).toList();
    }

    @Test
    void shouldSelectEveryPodOfTheNamespaceByADefaultDenyPolicy() {
        List<NetworkPolicy> denies = networkPolicies().stream()
                .filter(p -> p.getSpec().getPolicyTypes().containsAll(List.of("Ingress", "Egress")))
                .filter(p -> isEmpty(p.getSpec().getIngress()) && isEmpty(p.getSpec().getEgress()))
                .toList();
        assertThat(denies).as("a policy allowing nothing, ingress and egress").isNotEmpty();
        assertThat(denies).as("selects every pod, including pods added later")
                .anySatisfy(p -> assertThat(selectsEverything(p.getSpec().getPodSelector())).isTrue());
        podLabels().forEach((workload, labels) -> assertThat(denies).as(workload + " under a default-deny of its namespace")
                .anySatisfy(p -> {
                    assertThat(p.getMetadata().getNamespace()).isEqualTo(namespaceOf(workload));
                    assertThat(selectsEverything(p.getSpec().getPodSelector())).isTrue();
                }));
    }

    @Test
    void shouldNameADestinationInEveryEgressRule() {
        for (NetworkPolicy policy : networkPolicies()) {
            List<NetworkPolicyEgressRule> egress = policy.getSpec().getEgress() == null ? List.of() : policy.getSpec().getEgress();
            for (int i = 0; i < egress.size(); i++) {
                String rule = policy.getMetadata().getName() + " egress[" + i + "]";
                assertThat(egress.get(i).getTo()).as(rule + ": an empty 'to' allows every destination").isNotEmpty();
                for (NetworkPolicyPeer peer : egress.get(i).getTo()) {
                    boolean anyNamespace = peer.getNamespaceSelector() != null && selectsEverything(peer.getNamespaceSelector())
                            && (peer.getPodSelector() == null || selectsEverything(peer.getPodSelector()));
                    boolean anyAddress = peer.getIpBlock() != null && List.of("0.0.0.0/0", "::/0").contains(peer.getIpBlock().getCidr());
                    assertThat(anyNamespace || anyAddress).as(rule + ": a peer that names no destination " + peer).isFalse();
                }
                assertThat(egress.get(i).getPorts()).as(rule + ": ports").isNotEmpty();
            }
        }
    }

    /** Default-deny must not cut what the shipped configuration points at: DNS and Kafka and the registry where devhealth.env says. */
    @Test
    void shouldLetEveryPodReachDnsKafkaAndTheRegistryAsConfigured() {
        Map<String, String> env = objects.stream().filter(o -> o instanceof io.fabric8.kubernetes.api.model.ConfigMap)
                .map(io.fabric8.kubernetes.api.model.ConfigMap.class::cast)
                .filter(c -> c.getMetadata().getName().startsWith("devhealth-kafka")).findFirst().orElseThrow().getData();
        URI kafka = URI.create("kafka://" + env.get("DEVHEALTH_KAFKA_BOOTSTRAP_SERVERS").split(",")[0]);
        URI registry = URI.create(env.get("DEVHEALTH_SCHEMA_REGISTRY_URL"));
        podLabels().forEach((workload, labels) -> {
            assertThat(egressAllowed(namespaceOf(workload), labels, Map.of("kubernetes.io/metadata.name", "kube-system"), Map.of("k8s-app", "kube-dns"), "UDP", 53))
                    .as(workload + " → DNS").isTrue();
            assertThat(egressAllowed(namespaceOf(workload), labels, Map.of("kubernetes.io/metadata.name", serviceNamespace(kafka.getHost())), Map.of(), "TCP", kafka.getPort()))
                    .as(workload + " → Kafka " + kafka).isTrue();
            assertThat(egressAllowed(namespaceOf(workload), labels, Map.of("kubernetes.io/metadata.name", serviceNamespace(registry.getHost())), Map.of(), "TCP",
                    registry.getPort())).as(workload + " → registry " + registry).isTrue();
            assertThat(egressAllowed(namespaceOf(workload), labels, Map.of("kubernetes.io/metadata.name", "somewhere-else"), Map.of(), "TCP", kafka.getPort()))
                    .as(workload + " → another namespace").isFalse();
        });
    }

    /** {@code name.namespace.svc[...]}: the namespace of a Service's cluster DNS name. */
    private static String serviceNamespace(String host) {
        String[] labels = host.split("\\.");
        assertThat(labels.length).as(host + " is a Service's cluster DNS name").isGreaterThanOrEqualTo(3);
        assertThat(labels[2]).isEqualTo("svc");
        return labels[1];
    }

    /** Whether some policy of {@code namespace} selecting a pod with {@code labels} allows egress to a pod with {@code podLabels} in a namespace with {@code namespaceLabels}. */
    private static boolean egressAllowed(String namespace, Map<String, String> labels, Map<String, String> namespaceLabels,
                                         Map<String, String> podLabels, String protocol, int port) {
        return networkPolicies().stream()
                .filter(p -> namespace.equals(p.getMetadata().getNamespace()))
                .filter(p -> matches(p.getSpec().getPodSelector(), labels) && p.getSpec().getEgress() != null)
                .flatMap(p -> p.getSpec().getEgress().stream())
                .filter(rule -> rule.getPorts() == null || rule.getPorts().stream().anyMatch(q -> portMatches(q, protocol, port)))
                .anyMatch(rule -> rule.getTo() == null || rule.getTo().isEmpty() || rule.getTo().stream().anyMatch(peer ->
                        peer.getNamespaceSelector() != null && matches(peer.getNamespaceSelector(), namespaceLabels)
                                && (peer.getPodSelector() == null || matches(peer.getPodSelector(), podLabels))));
    }

    private static boolean portMatches(NetworkPolicyPort rule, String protocol, int port) {
        String ruleProtocol = rule.getProtocol() == null ? "TCP" : rule.getProtocol();
        return ruleProtocol.equals(protocol) && (rule.getPort() == null || Integer.valueOf(port).equals(rule.getPort().getIntVal()));
    }

    private static boolean isEmpty(List<?> list) {
        return list == null || list.isEmpty();
    }

    private static boolean selectsEverything(LabelSelector selector) {
        return selector != null && isEmpty(selector.getMatchExpressions())
                && (selector.getMatchLabels() == null || selector.getMatchLabels().isEmpty());
    }

    private static boolean matches(LabelSelector selector, Map<String, String> labels) {
        if (selector == null) {
            return false;
        }
        if (selector.getMatchLabels() != null && !labels.entrySet().containsAll(selector.getMatchLabels().entrySet())) {
            return false;
        }
        for (LabelSelectorRequirement requirement : selector.getMatchExpressions() == null ? List.<LabelSelectorRequirement>of()
                : selector.getMatchExpressions()) {
            String value = labels.get(requirement.getKey());
            boolean ok = switch (requirement.getOperator()) {
                case "In" -> requirement.getValues().contains(value);
                case "NotIn" -> value == null || !requirement.getValues().contains(value);
                case "Exists" -> value != null;
                case "DoesNotExist" -> value == null;
                default -> throw new AssertionError("unknown operator " + requirement.getOperator());
            };
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    private static Set<String> configMapKeys(String prefix) {
        return objects.stream().filter(o -> o instanceof io.fabric8.kubernetes.api.model.ConfigMap)
                .map(io.fabric8.kubernetes.api.model.ConfigMap.class::cast)
                .filter(c -> c.getMetadata().getName().startsWith(prefix))
                .flatMap(c -> c.getData().keySet().stream())
                .collect(Collectors.toSet());
    }

    /** Paths of every non-empty additionalProperties map in the object graph: fields the model did not recognise. */
    static List<String> unknownFields(Object root, String path) {
        List<String> found = new ArrayList<>();
        walk(root, path, found, new IdentityHashMap<>());
        return found;
    }

    private static void walk(Object value, String path, List<String> found, Map<Object, Boolean> seen) {
        if (value == null || seen.put(value, Boolean.TRUE) != null) {
            return;
        }
        if (value instanceof Collection<?> collection) {
            int i = 0;
            for (Object item : collection) {
                walk(item, path + "[" + i++ + "]", found, seen);
            }
            return;
        }
        if (value instanceof Map<?, ?> map) {
            map.forEach((k, v) -> walk(v, path + "." + k, found, seen));
            return;
        }
        if (!value.getClass().getName().startsWith("io.fabric8.kubernetes.api.model")) {
            return;
        }
        for (Method method : value.getClass().getMethods()) {
            if (method.getParameterCount() != 0 || !method.getName().startsWith("get") || method.getName().equals("getClass")) {
                continue;
            }
            try {
                Object child = method.invoke(value);
                if (method.getName().equals("getAdditionalProperties")) {
                    if (child instanceof Map<?, ?> extra && !extra.isEmpty()) {
                        found.add(path + " " + extra.keySet());
                    }
                } else {
                    walk(child, path + "." + method.getName().substring(3), found, seen);
                }
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
