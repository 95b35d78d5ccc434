package io.devhealth.cli.security;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.devhealth.cli.demo.BatchJob;
import io.devhealth.cli.demo.EmbeddedPipeline;
import io.devhealth.simulators.dra.DeviceState;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.simulators.kafka.KafkaSecurity;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
import io.devhealth.testkit.kafka.SecuredKafkaCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every Kafka client of every service (the collector's producer, the processor's Streams clients, the
 * sink's consumer) runs over authenticated, encrypted listeners — SASL_SSL with SCRAM-SHA-512, and
 * SSL with client certificates — configured only through the {@code kafka.*} pass-through settings
 * (DEVHEALTH_KAFKA_* in deployments). And no secret ever reaches the logs.
 */
@ExtendWith(KafkaClusterExtension.class)
class SecuredPipelineIT {

    /** Started before the broker (a registered extension is read before any @BeforeAll runs): its start is scanned too. */
    @RegisterExtension
    static final CapturedLogs LOGS = CapturedLogs.start();

    private static Path dir;
    private static KafkaSecurity security;
    private static EmbeddedKafkaCluster kafka;

    @BeforeAll
    static void startSecuredBroker(SecuredKafkaCluster secured) throws Exception {
        dir = Files.createTempDirectory("dh-sec");
        security = secured.security();
        kafka = secured.cluster();
    }

    @Test
    void shouldRunThePipelineOverScramAndKeepSecretsOutOfTheLogs() throws Exception {
        String password = KafkaSecurity.randomSecret();
        security.createScramUser(kafka, "devhealth", password);
        runSkeletonScenario(security.scramClient(kafka, "devhealth", password), "scram");

        assertNoSecretsLogged(List.of(password));
    }

    @Test
    void shouldRunThePipelineOverMutualTls() throws Exception {
        runSkeletonScenario(security.mtlsClient(kafka), "mtls");

        assertNoSecretsLogged(List.of());
    }

    @Test
    void shouldRejectClientsWithTheWrongPasswordOrNoCertificate() {
        security.createScramUser(kafka, "someone", KafkaSecurity.randomSecret());
        Map<String, Object> wrongPassword = new HashMap<>(security.scramClient(kafka, "someone", "not-the-password"));
        assertThatThrownBy(() -> describeCluster(wrongPassword))
                .hasRootCauseInstanceOf(org.apache.kafka.common.errors.SaslAuthenticationException.class);

        Map<String, Object> noCertificate = new HashMap<>(security.mtlsClient(kafka));
        noCertificate.remove("ssl.keystore.location");
        noCertificate.remove("ssl.keystore.password");
        noCertificate.remove("ssl.key.password");
        noCertificate.remove("ssl.keystore.type");
        assertThatThrownBy(() -> describeCluster(noCertificate)).isInstanceOf(ExecutionException.class);
    }

    private static void describeCluster(Map<String, Object> client) throws Exception {
        Map<String, Object> props = new HashMap<>(client);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        try (Admin admin = Admin.create(props)) {
            admin.describeCluster().nodes().get();
        }
    }

    private static void runSkeletonScenario(Map<String, Object> client, String name) throws Exception {
        EmbeddedPipeline.Options options = EmbeddedPipeline.Options.builder(dir.resolve(name)).nodes(1).devicesPerNode(1)
                .partitions(1).topicPrefix("devhealth-" + name + ".").build();
        try (EmbeddedPipeline pipeline = EmbeddedPipeline.start(options, kafka, client)) {
            EmbeddedPipeline.SimulatedNode node = pipeline.nodes().get(0);
            BatchJob job = BatchJob.onDevice("ml", "train-" + name, node.name(), EmbeddedPipeline.SimulatedNode.device(0));
            job.schedule(pipeline.kubernetes(), node.kubelet());
            node.driver().report(DeviceState.unhealthy(node.pool(), job.device(), "XID 79: GPU has fallen off the bus"));

            await(name + ": Unhealthy in pod status").atMost(Duration.ofSeconds(90)).until(() ->
                    job.conditionHealth(pipeline.kubernetes()).orElse(""), "Unhealthy"::equals);
        }
    }

    private static void assertNoSecretsLogged(List<String> extraSecrets) {
        List<String> secrets = new ArrayList<>(security.secrets());
        secrets.addAll(extraSecrets);
        LOGS.assertNoneContains(secrets);
    }
}
