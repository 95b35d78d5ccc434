package io.devhealth.testkit.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StrimziResourcesTest {

    @TempDir
    Path dir;

    @Test
    void shouldReadUsersAsTheAclsStrimziCreates() throws IOException {
        component("""
                apiVersion: kafka.strimzi.io/v1beta2
                kind: KafkaUser
                metadata: {name: app, labels: {strimzi.io/cluster: kafka}}
                spec:
                  authentication: {type: scram-sha-512}
                  authorization:
                    type: simple
                    acls:
                      - resource: {type: topic, name: app-, patternType: prefix}
                        operations: [DescribeConfigs, Read]
                      - resource: {type: cluster}
                        operations: [IdempotentWrite]
                        host: 10.0.0.1
                ---
                apiVersion: kafka.strimzi.io/v1beta2
                kind: KafkaUser
                metadata: {name: other}
                spec:
                  authentication: {type: tls}
                  authorization:
                    type: simple
                    acls:
                      - resource: {type: transactionalId, name: tx}
                        operations: [Write]
                """);

        StrimziResources resources = StrimziResources.readComponent(dir);

        assertThat(resources.user("app").acls()).containsExactly(
                binding(ResourceType.TOPIC, "app-", PatternType.PREFIXED, "User:app", "*", AclOperation.DESCRIBE_CONFIGS),
                binding(ResourceType.TOPIC, "app-", PatternType.PREFIXED, "User:app", "*", AclOperation.READ),
                binding(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL, "User:app", "10.0.0.1", AclOperation.IDEMPOTENT_WRITE));
        assertThat(resources.user("other").principal()).isEqualTo("User:CN=other");
        assertThat(resources.user("other").acls()).containsExactly(
                binding(ResourceType.TRANSACTIONAL_ID, "tx", PatternType.LITERAL, "User:CN=other", "*", AclOperation.WRITE));
    }

    @Test
    void shouldReadTopicsWithTheirKafkaNameAndConfig() throws IOException {
        component("""
                apiVersion: kafka.strimzi.io/v1beta2
                kind: KafkaTopic
                metadata: {name: app-events}
                spec:
                  topicName: app.events
                  partitions: 6
                  replicas: 3
                  config: {cleanup.policy: compact, retention.ms: 1000}
                """);

        assertThat(StrimziResources.readComponent(dir).topics()).containsExactly(
                new StrimziResources.Topic("app.events", 6, 3, java.util.Map.of("cleanup.policy", "compact", "retention.ms", "1000")));
    }

    @Test
    void shouldRefuseWhatItCannotApplyAsWritten() throws IOException {
        component("""
                apiVersion: kafka.strimzi.io/v1beta2
                kind: KafkaUser
                metadata: {name: app}
                spec:
                  authentication: {type: scram-sha-512}
                  authorization:
                    type: simple
                    acls:
                      - resource: {type: topic, name: t}
                        operations: [Reed]
                """);

        assertThatThrownBy(() -> StrimziResources.readComponent(dir)).hasMessageContaining("unknown operation Reed");
    }

    private void component(String resources) throws IOException {
        Files.writeString(dir.resolve("kustomization.yaml"), "kind: Component\nresources: [things.yaml]\n");
        Files.writeString(dir.resolve("things.yaml"), resources);
    }

    private static AclBinding binding(ResourceType type, String name, PatternType pattern, String principal, String host,
                                      AclOperation operation) {
        return new AclBinding(new ResourcePattern(type, name, pattern),
                new AccessControlEntry(principal, host, operation, AclPermissionType.ALLOW));
    }
}
