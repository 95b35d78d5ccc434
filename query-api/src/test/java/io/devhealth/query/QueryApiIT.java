package io.devhealth.query;

import io.devhealth.processor.ProcessorRun;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.ClaimAllocation;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.ContainerAllocation;
import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.avro.PodRef;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.avro.TerminatedContainer;
import io.devhealth.schema.avro.TerminatedDevice;
import io.devhealth.schema.avro.TerminatedPod;
import io.devhealth.schema.avro.Verdict;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
import io.devhealth.testkit.kafka.TopicReader;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The post-mortem query API end to end: a real broker, the real app (exactly-once), HTTP. */
@ExtendWith(KafkaClusterExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class QueryApiIT {

    private static final String NODE = "node-q";
    private static final String DRIVER = "gpu.example.com";
    private static final Duration WAIT = Duration.ofSeconds(60);

    private final ObjectMapper json = new ObjectMapper();
    private final HttpClient http = HttpClient.newHttpClient();
    private final Instant t1 = Instant.now().truncatedTo(ChronoUnit.MILLIS).minusSeconds(5);
    private final Instant t2 = t1.plusSeconds(2);
    private EmbeddedKafkaCluster kafka;
    private ProcessorRun run;
    private Topics topics;
    private QueryableProcessor app;
    private String base;

    @BeforeAll
    void start(EmbeddedKafkaCluster cluster, @TempDir Path state) throws Exception {
        kafka = cluster;
        run = new ProcessorRun(cluster, "qa", 2);
        topics = run.topics;
        app = QueryableRun.start(run, state.resolve("state"), Map.of(QueryConfig.ADVERTISED_HOST, "127.0.0.1"));
        base = "http://127.0.0.1:" + app.queryAddress().port();
        await("RUNNING").atMost(WAIT).until(() -> get("/readyz").statusCode() == 200);

        run.sendAllocations(NodeAllocations.newBuilder().setNode(NODE).setObservedAt(t1.minusSeconds(1))
                .setCollectorEpoch(1).setSequence(1)
                .setPods(List.of(new PodAllocation("ml", "train-q", List.of(ContainerAllocation.newBuilder().setName("main")
                        .setClaims(List.of(new ClaimAllocation("train-q-gpu", "ml", List.of(ClaimDevice.newBuilder()
                                .setDriver(DRIVER).setPool(NODE).setDevice("gpu-0").build())))).build()))))
                .build());
        run.sendReport(NODE, report(HealthStatus.HEALTHY, t1, 2, null));
        run.sendRaw(topics.nodeEvents(), NODE, "garbage".getBytes(StandardCharsets.UTF_8));
        run.sendReport(NODE, report(HealthStatus.UNHEALTHY, t2, 3, "XID-79"));
    }

    private static DeviceHealthReport report(HealthStatus health, Instant at, long sequence, String reason) {
        return DeviceHealthReport.newBuilder().setNode(NODE).setSource(SourceKind.DRA).setSourceName(DRIVER)
                .setDevice(DeviceRef.newBuilder().setDriver(DRIVER).setPool(NODE).setDevice("gpu-0").build())
                .setHealth(health).setReason(reason).setMessage(reason == null ? null : "XID 79: GPU has fallen off the bus")
                .setTimeoutSeconds(3600L).setObservedAt(at).setCollectorEpoch(1).setSequence(sequence).build();
    }

    @AfterAll
    void stop() {
        if (run != null) {
            run.close();
        }
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(base + path)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode getJson(String path, int expectedStatus) throws Exception {
        HttpResponse<String> response = get(path);
        assertThat(response.statusCode()).as(path + " -> " + response.body()).isEqualTo(expectedStatus);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
        return json.readTree(response.body());
    }

    private void awaitUnhealthy() {
        await("device Unhealthy").atMost(WAIT).until(() -> {
            HttpResponse<String> response = get("/v1/nodes/" + NODE + "/devices");
            return response.statusCode() == 200 && response.body().contains("\"health\":\"Unhealthy\"");
        });
    }

    @Test
    void shouldListTheDevicesOfANodeWithEachSourcesWord() throws Exception {
        awaitUnhealthy();
        JsonNode devices = getJson("/v1/nodes/" + NODE + "/devices", 200);

        assertThat(devices.get("items")).hasSize(1);
        JsonNode gpu = devices.get("items").get(0);
        assertThat(gpu.get("device").asText()).isEqualTo("gpu-0");
        assertThat(gpu.get("health").asText()).isEqualTo("Unhealthy");
        assertThat(gpu.get("reason").asText()).isEqualTo("XID-79");
        assertThat(gpu.get("sources").get(0).get("name").asText()).isEqualTo(DRIVER);
        assertThat(devices.get("continue").isNull()).isTrue();
    }

    @Test
    void shouldPageThroughADevicesHistory() throws Exception {
        awaitUnhealthy();
        String path = "/v1/devices/" + NODE + "/" + DRIVER + "/" + NODE + "/gpu-0/history";

        JsonNode all = getJson(path, 200);
        assertThat(all.get("items")).extracting(i -> i.get("from").asText() + "->" + i.get("to").asText())
                .containsExactly("Unknown->Healthy", "Healthy->Unhealthy");
        assertThat(all.get("items").get(1).get("affectedPods").get(0).asText()).isEqualTo("ml/train-q");

        List<String> paged = new ArrayList<>();
        JsonNode page = getJson(path + "?limit=1", 200);
        paged.add(page.get("items").get(0).get("to").asText());
        assertThat(page.get("continue").isNull()).isFalse();
        page = getJson(path + "?limit=1&continue=" + page.get("continue").asText(), 200);
        paged.add(page.get("items").get(0).get("to").asText());
        assertThat(paged).containsExactly("Healthy", "Unhealthy");

        JsonNode window = getJson(path + "?from=" + t2 + "&to=" + t2.plusSeconds(1), 200);
        assertThat(window.get("items")).hasSize(1);
    }

    @Test
    void shouldAnswerAPodsDevicesNowAndAsOfAnEarlierTime() throws Exception {
        awaitUnhealthy();
        await("pod status").atMost(WAIT).until(() -> get("/v1/pods/ml/train-q/devices").body().contains("\"summary\":\"Unhealthy\""));

        JsonNode now = getJson("/v1/pods/ml/train-q/devices", 200);
        assertThat(now.get("summary").asText()).isEqualTo("Unhealthy");
        JsonNode device = now.get("containers").get(0).get("claims").get(0).get("devices").get(0);
        assertThat(device.get("health").asText()).isEqualTo("Unhealthy");
        assertThat(device.get("message").asText()).isEqualTo("XID 79: GPU has fallen off the bus");

        JsonNode before = getJson("/v1/pods/ml/train-q/devices?at=" + t1.plusSeconds(1), 200);
        assertThat(before.get("summary").asText()).isEqualTo("Healthy");
    }

    @Test
    void shouldAnswerClearErrors() throws Exception {
        awaitUnhealthy();
        assertThat(getJson("/v1/pods/ml/nope/devices", 404).get("message").asText()).contains("ml/nope");
        assertThat(getJson("/v1/nodes/no-such-node/devices", 404).get("status").asInt()).isEqualTo(404);
        assertThat(getJson("/v1/devices/" + NODE + "/" + DRIVER + "/" + NODE + "/gpu-9/history", 404).get("message").asText())
                .contains("gpu-9");
        assertThat(getJson("/v1/pods/ml/train-q/devices?at=yesterday", 400).get("message").asText()).contains("RFC 3339");
        assertThat(getJson("/v1/nodes/" + NODE + "/devices?limit=0", 400).get("message").asText()).contains("limit");
        assertThat(getJson("/v1/nodes/" + NODE + "/devices?continue=bm90LWEtdG9rZW4", 400).get("message").asText()).contains("continue");
        assertThat(getJson("/v1/nothing", 404).get("status").asInt()).isEqualTo(404);
    }

    @Test
    void shouldSummariseTheFleetsTransitionsPerDimension() throws Exception {
        awaitUnhealthy();
        // Each dimension's count is its own key in the fleet store, updated through a repartition topic: one
        // dimension can show a transition a moment before another does, so the whole summary is awaited.
        await("fleet counts").atMost(WAIT).untilAsserted(() -> {
            JsonNode summary = getJson("/v1/fleet/summary?window=7d", 200);
            assertThat(summary.get("window").asText()).isEqualTo("PT168H");
            assertThat(summary.get("totals").get("toUnhealthy").asLong()).isEqualTo(1);
            assertThat(summary.get("totals").get("toHealthy").asLong()).isEqualTo(1);
            assertThat(summary.get("dimensions").get("NODE")).extracting(n -> n.get("key").asText(), n -> n.get("total").asLong())
                    .containsExactly(tuple(NODE, 2L));
            assertThat(summary.get("dimensions").get("DRIVER")).extracting(d -> d.get("key").asText()).containsExactly(DRIVER);
            assertThat(summary.get("dimensions").get("REASON")).extracting(r -> r.get("key").asText()).contains("XID-79");
        });
        assertThat(getJson("/v1/fleet/summary?window=soon", 400).get("message").asText()).contains("window");
    }

    /** The sink's verdict of the ended pod: in the pod's answer, on its own route, and counted in the fleet summary. */
    @Test
    void shouldAnswerATerminatedPodsVerdictAndCountItInTheFleetSummary() throws Exception {
        awaitUnhealthy();
        Instant recorded = t2.plusSeconds(1);
        run.sendVerdict(TerminatedPod.newBuilder().setId("uid-q").setPod(new PodRef("ml", "train-q", "uid-q")).setNode(NODE)
                .setPhase("Failed").setFinishedAt(t2).setVerdict(Verdict.DEVICE_FAILURE).setHealth(HealthStatus.UNHEALTHY)
                .setMessage("gpu-0 Unhealthy: XID 79")
                .setContainers(List.of(TerminatedContainer.newBuilder().setName("main").setExitCode(1).setDevices(List.of(
                        TerminatedDevice.newBuilder().setDevice(DeviceRef.newBuilder().setDriver(DRIVER).setPool(NODE).setDevice("gpu-0").build())
                                .setHealth(HealthStatus.UNHEALTHY).setSince(t2).setProduct("NVIDIA H100").build())).build()))
                .setRecordedAt(recorded).build());

        await("the verdict in the pod's answer").atMost(WAIT).until(() -> get("/v1/pods/ml/train-q/devices").body().contains("DeviceFailure"));
        JsonNode verdict = getJson("/v1/pods/ml/train-q/devices", 200).get("verdict");
        assertThat(verdict.get("verdict").asText()).isEqualTo("DeviceFailure");
        assertThat(verdict.get("uid").asText()).isEqualTo("uid-q");
        assertThat(verdict.get("finishedAt").asText()).isEqualTo(t2.toString());
        assertThat(getJson("/v1/pods/ml/train-q/verdict", 200).get("recordedAt").asText()).isEqualTo(recorded.toString());
        assertThat(getJson("/v1/pods/ml/train-q/devices?at=" + t1.plusSeconds(1), 200).get("verdict").isNull())
                .as("not known yet at that time").isTrue();
        assertThat(getJson("/v1/pods/ml/nope/verdict", 404).get("message").asText()).contains("ml/nope");

        await("the verdict counted").atMost(WAIT).until(() -> get("/v1/fleet/summary?window=7d").body().contains("NVIDIA H100"));
        JsonNode verdicts = getJson("/v1/fleet/summary?window=7d", 200).get("verdicts");
        assertThat(verdicts.get("NODE").get(0).get("key").asText()).isEqualTo(NODE);
        assertThat(verdicts.get("NODE").get(0).get("deviceFailure").asLong()).isEqualTo(1);
        assertThat(verdicts.get("PRODUCT").get(0).get("key").asText()).isEqualTo("NVIDIA H100");
        assertThat(verdicts.get("PRODUCT").get(0).get("noDeviceFailure").asLong()).isZero();
    }

    @Test
    void shouldServeHealthReadinessAndMetrics() throws Exception {
        awaitUnhealthy();
        assertThat(get("/healthz").statusCode()).isEqualTo(200);
        assertThat(get("/readyz").statusCode()).isEqualTo(200);
        String metrics = get("/metrics").body();
        assertThat(metrics).contains("devhealth_processor_transitions_total").contains("devhealth_processor_dead_letters_total");
    }

    @Test
    void shouldDeadLetterTheGarbageRecordUnderExactlyOnce() {
        List<DeadLetter> letters;
        try (TopicReader<byte[], DeadLetter> reader = TopicReader.of(kafka, topics.deadLetters())
                .deserializers(new ByteArrayDeserializer(), run.serdes.deadLetters().deserializer()).open()) {
            letters = reader.readAtLeast(1, WAIT).stream().map(ConsumerRecord::value).toList();
        }
        assertThat(letters).singleElement().satisfies(letter -> {
            assertThat(StandardCharsets.UTF_8.decode(letter.getValue()).toString()).isEqualTo("garbage");
            assertThat(letter.getSourceTopic()).isEqualTo(topics.nodeEvents());
        });
    }
}
