package io.devhealth.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.devhealth.processor.ProcessorConfig;
import io.devhealth.query.QueryConfig;
import io.devhealth.query.access.QuerySecurityConfig;
import io.devhealth.runtime.config.ServiceConfig;
import io.devhealth.schema.Topics;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code devhealth processor} against the in-process broker with every input topic but pod-verdicts
 * (the sink's, so the one a cluster set up for the collector and processor alone lacks): it must end
 * at start with its own exit code and name the topic, not run while processing nothing.
 */
@ExtendWith(KafkaClusterExtension.class)
class ProcessorMissingTopicIT {

    @TempDir
    Path tmp;

    @Test
    void shouldExitNamingTheMissingInputTopicWhenTheClusterLacksPodVerdicts(EmbeddedKafkaCluster kafka) {
        Topics topics = new Topics(EmbeddedKafkaCluster.uniqueName("missing") + ".");
        kafka.createTopics(1, topics.nodeEvents(), topics.healthTransitions(), topics.fleetStats(), topics.deadLetters());
        kafka.createCompactedTopics(1, topics.podDeviceStatus());
        CommandLine processor = Devhealth.commandLine();
        StringWriter err = new StringWriter();
        processor.setErr(new PrintWriter(err, true));
        List<String> args = new ArrayList<>(List.of("processor"));
        Map.of(ProcessorConfig.BOOTSTRAP_SERVERS, kafka.bootstrapServers(),
                ProcessorConfig.SCHEMA_REGISTRY_URL, "mem://" + EmbeddedKafkaCluster.uniqueName("registry"),
                ServiceConfig.TOPIC_PREFIX, topics.prefix(),
                ProcessorConfig.APPLICATION_ID, EmbeddedKafkaCluster.uniqueName("missing-app"),
                ProcessorConfig.STATE_DIR, tmp.resolve("state").toString(),
                QueryConfig.BIND_ADDRESS, "127.0.0.1",
                QueryConfig.PORT, "0",
                QuerySecurityConfig.INSECURE, "true").forEach((key, value) -> args.addAll(List.of("--set", key + "=" + value)));

        // A processor that starts anyway would run until stopped: the timeout turns that into a failure.
        int exit = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> processor.execute(args.toArray(String[]::new)));

        System.out.printf("processor-missing-topic exit=%d stderr=%s%n", exit, err.toString().strip());
        assertThat(exit).as("exit code").isEqualTo(ServiceCommands.EXIT_MISSING_TOPICS);
        assertThat(err.toString()).contains(topics.podVerdicts()).contains("k8s/components/strimzi/topics.yaml")
                .doesNotContain(topics.nodeEvents());
    }
}
