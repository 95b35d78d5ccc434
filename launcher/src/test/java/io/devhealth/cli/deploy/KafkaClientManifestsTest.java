package io.devhealth.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.simulators.realkube.KubeBinaries;
import io.devhealth.testkit.realkube.Kustomize;
import io.devhealth.testkit.realkube.RealKubernetesExtension;
import io.devhealth.processor.PipelineSchemas;
import io.devhealth.schema.Topics;
import io.devhealth.sink.SinkConfig;
import io.devhealth.testkit.kafka.StrimziResources;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * How the shipped k8s/ reaches Kafka and the schema registry, rendered with the real
 * {@code kubectl kustomize}: SASL_SSL as each service's own Strimzi user, the registry over HTTPS with
 * read-only credentials and no auto-registration, every secret from a Secret, and the Strimzi
 * component's users and topics covering exactly what the services use.
 */
@ExtendWith(RealKubernetesExtension.class)
class KafkaClientManifestsTest {

    private static final Path COMPONENT = Path.of("..", "k8s", "components", "strimzi");
    /** Settings whose value is a credential: never a literal, never in a ConfigMap. */
    private static final Pattern SECRET_SETTING = Pattern.compile(".*(PASSWORD|JAAS_CONFIG|USER_INFO|TOKEN|SECRET)$");
    private static final Map<String, String> USERS = Map.of("collector", "devhealth-collector", "processor", "devhealth-processor",
            "sink", "devhealth-sink");

    private static List<HasMetadata> objects;
    private static Map<String, String> env;
    private static StrimziResources strimzi;

    @BeforeAll
    static void render(KubeBinaries kube) throws IOException {
        objects = Kustomize.render(kube, Path.of("..", "k8s"));
        env = objects.stream().filter(ConfigMap.class::isInstance).map(ConfigMap.class::cast)
                .filter(c -> c.getMetadata().getName().startsWith("devhealth-kafka")).findFirst().orElseThrow().getData();
        strimzi = StrimziResources.readComponent(COMPONENT);
    }

    private static Map<String, PodSpec> workloads() {
        return Map.of(
                "collector", one(DaemonSet.class, "node-collector").getSpec().getTemplate().getSpec(),
                "processor", one(StatefulSet.class, "stream-processor").getSpec().getTemplate().getSpec(),
                "sink", one(Deployment.class, "sink-apiserver").getSpec().getTemplate().getSpec());
    }

    @Test
    void shouldReachKafkaOverSaslSslAndTheRegistryOverHttpsWithoutRegistering() {
        assertThat(env).containsEntry("DEVHEALTH_KAFKA_SECURITY_PROTOCOL", "SASL_SSL")
                .containsEntry("DEVHEALTH_KAFKA_SASL_MECHANISM", "SCRAM-SHA-512")
                .containsEntry("DEVHEALTH_AUTO_REGISTER_SCHEMAS", "false");
        assertThat(env.get("DEVHEALTH_SCHEMA_REGISTRY_URL")).startsWith("https://");
        objects.stream().filter(ConfigMap.class::isInstance).map(ConfigMap.class::cast)
                .flatMap(c -> c.getData() == null ? java.util.stream.Stream.empty() : c.getData().values().stream())
                .forEach(value -> assertThat(value).doesNotContain("http://").doesNotContain("PLAINTEXT"));
        workloads().forEach((service, pod) -> pod.getContainers().get(0).getEnv().stream()
                .filter(e -> e.getValue() != null)
                .forEach(e -> assertThat(e.getValue()).as(service + " " + e.getName()).doesNotContain("http://").doesNotContain("PLAINTEXT")));
    }

    @Test
    void shouldTakeEveryCredentialFromASecretAndEachServiceItsOwnKafkaUser() {
        assertThat(env.keySet().stream().filter(k -> SECRET_SETTING.matcher(k).matches())).as("credentials in the ConfigMap").isEmpty();
        workloads().forEach((service, pod) -> {
            Container container = pod.getContainers().get(0);
            for (EnvVar variable : container.getEnv()) {
                if (SECRET_SETTING.matcher(variable.getName()).matches()) {
                    assertThat(variable.getValue()).as(service + " " + variable.getName() + " is a literal").isNull();
                    assertThat(variable.getValueFrom().getSecretKeyRef()).as(service + " " + variable.getName()).isNotNull();
                }
            }
            var jaas = env(container, "DEVHEALTH_KAFKA_SASL_JAAS_CONFIG").getValueFrom().getSecretKeyRef();
            // Strimzi's User Operator names a user's Secret after the KafkaUser, with the JAAS line under sasl.jaas.config.
            assertThat(jaas.getName()).as(service + "'s Kafka user").isEqualTo(USERS.get(service));
            assertThat(jaas.getKey()).isEqualTo("sasl.jaas.config");
            assertThat(strimzi.user(jaas.getName()).authentication()).isEqualTo("scram-sha-512");
            assertThat(env(container, "DEVHEALTH_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO").getValueFrom().getSecretKeyRef()).isNotNull();
            assertMountedFromSecret(service, pod, container, env.get("DEVHEALTH_KAFKA_SSL_TRUSTSTORE_LOCATION"), "kafka-cluster-ca-cert", "ca.crt");
            assertMountedFromSecret(service, pod, container, env.get("DEVHEALTH_SCHEMA_REGISTRY_SSL_TRUSTSTORE_LOCATION"),
                    "devhealth-schema-registry", "ca.crt");
            Set<String> names = container.getEnv().stream().map(EnvVar::getName).collect(Collectors.toCollection(HashSet::new));
            names.addAll(env.keySet());
            assertThat(ServiceEnvironment.unknownVariables(service, names)).as(service + " settings it would ignore").isEmpty();
        });
        assertThat(strimzi.users()).extracting(StrimziResources.User::name).containsExactlyInAnyOrderElementsOf(USERS.values());
    }

    @Test
    void shouldCoverExactlyTheTopicsGroupsAndIdsTheServicesUse() {
        Topics topics = new Topics(env.get("DEVHEALTH_TOPIC_PREFIX"));
        assertThat(strimzi.topics()).extracting(StrimziResources.Topic::name).containsExactlyInAnyOrderElementsOf(topics.all());
        StrimziResources.Topic nodeEvents = strimzi.topics().stream().filter(t -> t.name().equals(topics.nodeEvents())).findFirst().orElseThrow();
        assertThat(nodeEvents.config()).containsEntry("message.timestamp.type", "LogAppendTime");
        StrimziResources.Topic status = strimzi.topics().stream().filter(t -> t.name().equals(topics.podDeviceStatus())).findFirst().orElseThrow();
        assertThat(status.config()).containsEntry("cleanup.policy", "compact");

        Set<String> literalTopics = strimzi.users().stream().flatMap(u -> u.acls().stream())
                .filter(a -> a.pattern().resourceType() == ResourceType.TOPIC && a.pattern().patternType() == PatternType.LITERAL)
                .map(a -> a.pattern().name()).collect(Collectors.toSet());
        assertThat(literalTopics).as("every topic granted is a shipped topic").isSubsetOf(topics.all());

        String applicationId = env(workloads().get("processor").getContainers().get(0), "DEVHEALTH_APPLICATION_ID").getValue();
        assertThat(names(strimzi.user("devhealth-processor").acls(), ResourceType.GROUP, PatternType.LITERAL)).containsExactly(applicationId);
        // Generated names only: Kafka Streams' internal topics and transactional ids.
        assertThat(names(strimzi.user("devhealth-processor").acls(), ResourceType.TOPIC, PatternType.PREFIXED)).containsExactly(applicationId + "-");
        assertThat(names(strimzi.user("devhealth-processor").acls(), ResourceType.TRANSACTIONAL_ID, PatternType.PREFIXED))
                .containsExactly(applicationId + "-");
        assertThat(strimzi.users().stream().flatMap(u -> u.acls().stream()).filter(a -> a.pattern().patternType() == PatternType.PREFIXED)
                .map(a -> a.pattern().name())).as("prefixes anywhere else").allMatch(name -> name.equals(applicationId + "-"));
        String sinkGroup = env(workloads().get("sink").getContainers().get(0), "DEVHEALTH_GROUP_ID").getValue();
        assertThat(sinkGroup).isEqualTo(SinkConfig.DEFINITION.defaultValues().get(SinkConfig.GROUP_ID));
        // Its own group, and that of its optional health-transitions consumer (retry elsewhere), by their defaults.
        assertThat(names(strimzi.user("devhealth-sink").acls(), ResourceType.GROUP, PatternType.LITERAL)).containsExactlyInAnyOrder(sinkGroup,
                (String) SinkConfig.DEFINITION.defaultValues().get(SinkConfig.TAINT_RULES_GROUP_ID));
        assertThat(names(strimzi.user("devhealth-collector").acls(), ResourceType.TOPIC, PatternType.LITERAL))
                .as("the collector writes its one topic").containsExactly(topics.nodeEvents());
        assertThat(PipelineSchemas.subjects(topics, applicationId)).isNotEmpty();
    }

    private static Set<String> names(List<AclBinding> acls, ResourceType type, PatternType pattern) {
        return acls.stream().filter(a -> a.pattern().resourceType() == type && a.pattern().patternType() == pattern)
                .map(a -> a.pattern().name()).collect(Collectors.toSet());
    }

    private static void assertMountedFromSecret(String service, PodSpec pod, Container container, String file, String secret, String key) {
        Map<String, VolumeMount> mounts = new HashMap<>();
        container.getVolumeMounts().forEach(m -> mounts.put(m.getName(), m));
        Volume volume = pod.getVolumes().stream().filter(v -> v.getSecret() != null && secret.equals(v.getSecret().getSecretName()))
                .findFirst().orElseThrow(() -> new AssertionError(service + " mounts no Secret " + secret));
        VolumeMount mount = mounts.get(volume.getName());
        assertThat(mount).as(service + " mounts " + secret).isNotNull();
        assertThat(volume.getSecret().getItems()).anySatisfy(item -> {
            assertThat(item.getKey()).isEqualTo(key);
            assertThat(mount.getMountPath() + "/" + item.getPath()).as(service + " reads " + file).isEqualTo(file);
        });
    }

    private static <T> T one(Class<T> type, String name) {
        return objects.stream().filter(type::isInstance).map(type::cast)
                .filter(o -> ((HasMetadata) o).getMetadata().getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " " + name));
    }

    private static EnvVar env(Container container, String name) {
        return container.getEnv().stream().filter(e -> e.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + name + " in the environment"));
    }
}
