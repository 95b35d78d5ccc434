package io.devhealth.cli.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.cli.demo.BatchJob;
import io.devhealth.cli.demo.EmbeddedPipeline;
import io.devhealth.schema.serde.HttpsApicurio;
import io.devhealth.simulators.dra.DeviceState;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The whole pipeline (collector → Kafka → processor → sink) with the real Apicurio Registry 3.3.3 as
 * its schema registry, served over HTTPS only and requiring HTTP basic credentials on every API call.
 * All three services get the registry the way a deployment gives it: {@code schema.registry.url}
 * ({@code https://…/apis/ccompat/v7}), a PKCS12 truststore holding the run's own certificate
 * authority with its password, and {@code schema.registry.basic.auth.user.info}. No secret may
 * reach the logs.
 *
 * <p>Like the schemas' Apicurio ITs, it fails without a JDK >= 21 unless
 * {@code -Ddevhealth.it.apicurio.skip=true} (which {@code .ci/run} passes when it finds none).
 * Server output: {@code target/apicurio-secured-pipeline-it.log}.
 */
class SecuredRegistryPipelineIT {

    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(
            Long.getLong("devhealth.it.apicurio.startup.timeout.s", 120));
    private static final Duration STEP = Duration.ofSeconds(60);

    private static CapturedLogs logs;
    private static HttpsApicurio registry;

    @BeforeAll
    static void startRegistry() throws Exception {
        Path java = HttpsApicurio.javaOrSkip();
        logs = CapturedLogs.start();
        Path target = Paths.get("target").toAbsolutePath();
        Path home = Paths.get(System.getProperty("devhealth.it.apicurio.home", "target/apicurio"));
        registry = HttpsApicurio.start(java, home, Files.createTempDirectory(target, "registry-tls-").resolve("ca"),
                target.resolve("apicurio-secured-pipeline-it.log"), STARTUP_TIMEOUT);
        System.out.println("Apicurio Registry (HTTPS, basic auth) startup took " + registry.startupTime().toMillis() + " ms");
    }

    @AfterAll
    static void stop() {
        if (registry != null) {
            registry.close();
        }
        if (logs != null) {
            logs.close();
        }
    }

    @Test
    void shouldCarryAnUnhealthyDeviceToThePodThroughTheHttpsRegistryAndLogNoSecret() throws Exception {
        String prefix = "devhealth-https-registry.";
        // Short: unix socket paths under it must fit in 108 bytes.
        Path workDir = Files.createTempDirectory("dh-reg");
        EmbeddedPipeline.Options options = EmbeddedPipeline.Options.builder(workDir).nodes(1).devicesPerNode(2).partitions(1)
                .topicPrefix(prefix)
                .serviceOptions(registry.serviceOptions())
                .build();

        try (EmbeddedPipeline pipeline = EmbeddedPipeline.start(options)) {
            assertThat(pipeline.schemaRegistryUrl()).isEqualTo(registry.ccompatUrl()).startsWith("https://");
            EmbeddedPipeline.SimulatedNode node = pipeline.nodes().get(0);
            BatchJob job = BatchJob.onDevice("ml", "train-https", node.name(), EmbeddedPipeline.SimulatedNode.device(1));
            job.schedule(pipeline.kubernetes(), node.kubelet());
            await("Healthy in pod status").atMost(STEP).until(() -> health(pipeline, job), "Healthy"::equals);

            node.driver().report(
                    DeviceState.healthy(node.pool(), EmbeddedPipeline.SimulatedNode.device(0)),
                    DeviceState.unhealthy(node.pool(), job.device(), "XID 79: GPU has fallen off the bus"));

            await("Unhealthy in pod status").atMost(STEP).until(() -> health(pipeline, job), "Unhealthy"::equals);
            assertThat(job.condition(pipeline.kubernetes()).orElseThrow().getMessage())
                    .contains(job.device()).endsWith(": XID 79: GPU has fallen off the bus");

            // Each stage registered what it writes, in Apicurio, over HTTPS with the credentials:
            // the collector its node events, the processor the sink's input and the SIEM feed.
            List<String> subjects = registry.subjects();
            assertThat(subjects).contains(
                    pipeline.topics().nodeEvents() + "-value",
                    pipeline.topics().podDeviceStatus() + "-value",
                    pipeline.topics().healthTransitions() + "-value");
        }

        logs.assertNoneContains(registry.secrets());
    }

    private static String health(EmbeddedPipeline pipeline, BatchJob job) {
        return job.conditionHealth(pipeline.kubernetes()).orElse("");
    }
}
