package io.devhealth.query;

import io.devhealth.processor.ProcessorRun;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.schema.avro.ClaimAllocation;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.ContainerAllocation;
import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
import io.devhealth.testkit.kafka.TopicReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The holder of a pod survives a restart that restores every store from its changelog: a second
 * node's claim after the restart is refused as it was before, and the query API still answers with
 * the holder's status.
 */
@ExtendWith(KafkaClusterExtension.class)
class PodClaimsRestartIT {

    private static final String DRIVER = "gpu.example.com";
    private static final Duration WAIT = Duration.ofSeconds(90);

    private final Instant t0 = Instant.now().truncatedTo(ChronoUnit.MILLIS).minus(Duration.ofMinutes(10));
    private final HttpClient http = HttpClient.newHttpClient();
    private ProcessorRun run;
    private long sequence;

    @AfterEach
    void stop() {
        if (run != null) {
            run.close();
        }
    }

    @Test
    void shouldKeepThePodsHolderAcrossARestartFromTheChangelogs(EmbeddedKafkaCluster cluster, @TempDir Path tmp) throws Exception {
        run = new ProcessorRun(cluster, "claims", 1);
        String base = start(tmp.resolve("first"));
        run.sendAllocations(allocation("node-a", t0, "gpu-0"));
        await("node-a's status accepted").atMost(WAIT).until(() -> podAnswer(base).contains("\"node\":\"node-a\""));
        run.sendAllocations(allocation("node-b", t0.plusSeconds(1), "gpu-0"));
        await("node-b's claim refused").atMost(WAIT).until(() -> refusals().size() == 1);
        run.stop();

        // A new instance with an empty state directory: the claims come back from their changelog.
        String restarted = start(tmp.resolve("second"));
        // node-b's pod now holds another GPU: a new status of node-b's.
        run.sendAllocations(allocation("node-b", t0.plusSeconds(2), "gpu-1"));
        await("node-b's second claim refused").atMost(WAIT).until(() -> refusals().size() == 2);
        assertThat(refusals()).allSatisfy(reason -> assertThat(reason).contains("ml/train-c", "held by node node-a", "from node node-b"));
        assertThat(podAnswer(restarted)).contains("\"node\":\"node-a\"");
    }

    private String start(Path stateDir) throws Exception {
        // The second instance gets the partition once the first one's session ends (it does not leave the group).
        QueryableProcessor app = QueryableRun.start(run, stateDir, Map.of(QueryConfig.ADVERTISED_HOST, "127.0.0.1",
                "kafka." + ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000"));
        String base = "http://127.0.0.1:" + app.queryAddress().port();
        await("RUNNING").atMost(WAIT).until(() -> get(base + "/readyz").statusCode() == 200);
        return base;
    }

    /** Node {@code node}'s snapshot: pod ml/train-c alone, holding the node's {@code device}. */
    private NodeAllocations allocation(String node, Instant at, String device) {
        return NodeAllocations.newBuilder().setNode(node).setObservedAt(at).setCollectorEpoch(1).setSequence(++sequence)
                .setPods(List.of(new PodAllocation("ml", "train-c", List.of(ContainerAllocation.newBuilder().setName("main")
                        .setClaims(List.of(new ClaimAllocation("train-c-gpu", "ml", List.of(ClaimDevice.newBuilder()
                                .setDriver(DRIVER).setPool(node).setDevice(device).build())))).build()))))
                .build();
    }

    private String podAnswer(String base) throws Exception {
        HttpResponse<String> response = get(base + "/v1/pods/ml/train-c/devices");
        return response.statusCode() == 200 ? response.body() : "";
    }

    private HttpResponse<String> get(String url) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The reasons of the committed dead letters so far. */
    private List<String> refusals() {
        try (TopicReader<byte[], DeadLetter> reader = TopicReader.of(run.kafka, run.topics.deadLetters())
                .deserializers(new ByteArrayDeserializer(), run.serdes.deadLetters().deserializer()).open()) {
            return reader.readToEnd(WAIT).stream().map(r -> r.value().getReason()).toList();
        }
    }
}
