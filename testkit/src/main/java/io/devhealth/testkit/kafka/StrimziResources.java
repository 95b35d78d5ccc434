package io.devhealth.testkit.kafka;

import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.simulators.kafka.KafkaSecurity;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Strimzi {@code KafkaUser} and {@code KafkaTopic} resources of a kustomize component (the files its
 * {@code kustomization.yaml} lists), read as what Strimzi's operators would make of them: SCRAM users,
 * {@link AclBinding}s and topics. {@link #applyTo} then creates them on an in-process broker, so that a
 * test runs the services under exactly the grants that ship, not a copy of them.
 *
 * <p>Strimzi's conventions, as its User Operator applies them: the principal of a
 * {@code scram-sha-512} user is {@code User:<name>}, of a {@code tls} user {@code User:CN=<name>}; a
 * {@code prefix} pattern is Kafka's {@code PREFIXED}; a rule without {@code host} allows every host; the
 * cluster resource is named {@code kafka-cluster}. Anything this reader does not know (a deprecated
 * single {@code operation}, a {@code deny} rule, another authorization type) fails the read, so a
 * resource is never applied with less than it says.
 */
public final class StrimziResources {

    private static final Logger LOGGER = LoggerFactory.getLogger(StrimziResources.class);
    private static final String API_VERSION = "kafka.strimzi.io/v1beta2";
    private static final String CLUSTER_NAME = "kafka-cluster";

    /** One KafkaUser: its principal and the ACLs Strimzi would create for it. */
    public record User(String name, String authentication, String principal, List<AclBinding> acls) {
        public User {
            acls = List.copyOf(acls);
        }
    }

    /** One KafkaTopic: its name in Kafka, partitions, replicas and topic configuration. */
    public record Topic(String name, int partitions, int replicas, Map<String, String> config) {
        public Topic {
            config = Map.copyOf(config);
        }
    }

    private final List<User> users;
    private final List<Topic> topics;

    private StrimziResources(List<User> users, List<Topic> topics) {
        this.users = List.copyOf(users);
        this.topics = List.copyOf(topics);
    }

    /**
     * Reads the KafkaUser and KafkaTopic resources of every file the component's
     * {@code kustomization.yaml} lists under {@code resources}.
     *
     * @param component the component's directory, e.g. {@code k8s/components/strimzi}
     */
    @SuppressWarnings("unchecked")
    public static StrimziResources readComponent(Path component) {
        KubernetesSerialization yaml = new KubernetesSerialization();
        Map<String, Object> kustomization = yaml.unmarshal(read(component.resolve("kustomization.yaml")), Map.class);
        List<Object> files = (List<Object>) kustomization.getOrDefault("resources", List.of());
        List<User> users = new ArrayList<>();
        List<Topic> topics = new ArrayList<>();
        for (Object file : files) {
            for (HasMetadata object : objects(yaml, component.resolve(String.valueOf(file)))) {
                if (!(object instanceof GenericKubernetesResource resource) || !API_VERSION.equals(resource.getApiVersion())) {
                    continue;
                }
                Map<String, Object> spec = map(resource.getAdditionalProperties().get("spec"), resource.getKind() + " spec");
                if ("KafkaUser".equals(resource.getKind())) {
                    users.add(user(resource.getMetadata().getName(), spec));
                } else if ("KafkaTopic".equals(resource.getKind())) {
                    topics.add(topic(resource.getMetadata().getName(), spec));
                }
            }
        }
        return new StrimziResources(users, topics);
    }

    public List<User> users() {
        return users;
    }

    public List<Topic> topics() {
        return topics;
    }

    /** @throws IllegalArgumentException if no KafkaUser has this name */
    public User user(String name) {
        return users.stream().filter(u -> u.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no KafkaUser " + name + " among " + users.stream().map(User::name).toList()));
    }

    /**
     * Creates every user (SCRAM-SHA-512, a random password each), exactly its ACLs and every topic,
     * through the broker's own admin client (the PLAINTEXT listener, whose principal must be a super
     * user). Replicas and {@code min.insync.replicas} are capped at 1, the broker count; every other
     * topic setting is applied as written.
     *
     * @return each user's password, by user name, for {@link KafkaSecurity#scramClient}
     */
    public Map<String, String> applyTo(EmbeddedKafkaCluster kafka, KafkaSecurity security) {
        Map<String, String> passwords = new LinkedHashMap<>();
        List<AclBinding> acls = new ArrayList<>();
        for (User user : users) {
            if (!"scram-sha-512".equals(user.authentication())) {
                throw new IllegalArgumentException("KafkaUser " + user.name() + ": only scram-sha-512 users can be created here, not "
                        + user.authentication());
            }
            String password = KafkaSecurity.randomSecret();
            security.createScramUser(kafka, user.name(), password);
            passwords.put(user.name(), password);
            acls.addAll(user.acls());
        }
        await(kafka.admin().createAcls(acls).all(), "create ACLs");
        LOGGER.info("strimzi resources applied users={} acls={}", passwords.keySet(), acls.size());
        for (Topic topic : topics) {
            Map<String, String> config = new LinkedHashMap<>(topic.config());
            config.computeIfPresent(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, (key, value) -> "1");
            kafka.createTopics(topic.partitions(), config, topic.name());
        }
        return passwords;
    }

    private static User user(String name, Map<String, Object> spec) {
        String authentication = String.valueOf(map(spec.get("authentication"), "KafkaUser " + name + " authentication").get("type"));
        String principal;
        if ("scram-sha-512".equals(authentication)) {
            principal = "User:" + name;
        } else if ("tls".equals(authentication)) {
            principal = "User:CN=" + name;
        } else {
            throw new IllegalArgumentException("KafkaUser " + name + ": unknown authentication type " + authentication);
        }
        Map<String, Object> authorization = map(spec.get("authorization"), "KafkaUser " + name + " authorization");
        if (!"simple".equals(authorization.get("type"))) {
            throw new IllegalArgumentException("KafkaUser " + name + ": authorization type " + authorization.get("type") + " is not simple");
        }
        List<AclBinding> bindings = new ArrayList<>();
        for (Object rule : list(authorization.get("acls"), "KafkaUser " + name + " acls")) {
            bindings.addAll(acl(name, principal, map(rule, "KafkaUser " + name + " acl")));
        }
        return new User(name, authentication, principal, bindings);
    }

    private static List<AclBinding> acl(String user, String principal, Map<String, Object> rule) {
        String where = "KafkaUser " + user + " acl " + rule;
        if (rule.containsKey("operation")) {
            throw new IllegalArgumentException(where + ": the deprecated single 'operation' is not read; use 'operations'");
        }
        if (!"allow".equals(String.valueOf(rule.getOrDefault("type", "allow")))) {
            throw new IllegalArgumentException(where + ": only allow rules are read");
        }
        Map<String, Object> resource = map(rule.get("resource"), where + " resource");
        ResourceType type = switch (String.valueOf(resource.get("type"))) {
            case "topic" -> ResourceType.TOPIC;
            case "group" -> ResourceType.GROUP;
            case "cluster" -> ResourceType.CLUSTER;
            case "transactionalId" -> ResourceType.TRANSACTIONAL_ID;
            default -> throw new IllegalArgumentException(where + ": unknown resource type " + resource.get("type"));
        };
        String resourceName = type == ResourceType.CLUSTER ? CLUSTER_NAME : String.valueOf(resource.get("name"));
        PatternType pattern = switch (String.valueOf(resource.getOrDefault("patternType", "literal"))) {
            case "literal" -> PatternType.LITERAL;
            case "prefix" -> PatternType.PREFIXED;
            default -> throw new IllegalArgumentException(where + ": unknown patternType " + resource.get("patternType"));
        };
        String host = String.valueOf(rule.getOrDefault("host", "*"));
        List<AclBinding> bindings = new ArrayList<>();
        for (Object operation : list(rule.get("operations"), where + " operations")) {
            bindings.add(new AclBinding(new ResourcePattern(type, resourceName, pattern),
                    new AccessControlEntry(principal, host, operation(where, String.valueOf(operation)), AclPermissionType.ALLOW)));
        }
        return bindings;
    }

    /** Strimzi spells Kafka's operations in camel case: {@code DescribeConfigs} is {@code DESCRIBE_CONFIGS}. */
    private static AclOperation operation(String where, String name) {
        String constant = name.replaceAll("([a-z])([A-Z])", "$1_$2").toUpperCase(Locale.ROOT);
        try {
            AclOperation operation = AclOperation.valueOf(constant);
            if (operation != AclOperation.UNKNOWN && operation != AclOperation.ANY) {
                return operation;
            }
        } catch (IllegalArgumentException e) {
            // reported below
        }
        throw new IllegalArgumentException(where + ": unknown operation " + name);
    }

    private static Topic topic(String name, Map<String, Object> spec) {
        String topicName = String.valueOf(spec.getOrDefault("topicName", name));
        int partitions = ((Number) spec.get("partitions")).intValue();
        int replicas = ((Number) spec.get("replicas")).intValue();
        Map<String, String> config = new LinkedHashMap<>();
        Object given = spec.get("config");
        if (given != null) {
            map(given, "KafkaTopic " + name + " config").forEach((key, value) -> config.put(key, String.valueOf(value)));
        }
        return new Topic(topicName, partitions, replicas, config);
    }

    private static List<HasMetadata> objects(KubernetesSerialization yaml, Path file) {
        Object parsed = yaml.unmarshal(read(file));
        if (parsed instanceof List<?> many) {
            return many.stream().map(HasMetadata.class::cast).toList();
        }
        return List.of((HasMetadata) parsed);
    }

    private static InputStream read(Path file) {
        try {
            return Files.newInputStream(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object value, String what) {
        if (!(value instanceof Map<?, ?>)) {
            throw new IllegalArgumentException(what + " is missing or not a mapping: " + value);
        }
        return (Map<String, Object>) value;
    }

    private static List<?> list(Object value, String what) {
        if (!(value instanceof List<?> items)) {
            throw new IllegalArgumentException(what + " is missing or not a list: " + value);
        }
        return items;
    }

    private static void await(org.apache.kafka.common.KafkaFuture<Void> future, String what) {
        try {
            future.get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted: " + what, e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot " + what, e);
        }
    }
}
