package io.devhealth.query;

import io.devhealth.processor.DeviceHealthTopology;
import io.devhealth.processor.ProcessorRun;
import io.devhealth.query.routing.StandbyReads;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.devhealth.schema.avro.ClaimAllocation;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.ContainerAllocation;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.ThreadMetadata;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Standby reads, on two real instances with {@code num.standby.replicas=1} and static membership: while the
 * instance that holds a partition is gone but still a member (a SIGKILL, until its session times out; here
 * its query API closed with it, and a session longer than the test), the other instance answers that
 * partition's nodes and pods from its standby copy, marked {@value StandbyReads#STALE_HEADER}, with what
 * the gone instance answered; without standby reads it can only say 503.
 */
@ExtendWith(KafkaClusterExtension.class)
class StandbyReadsIT {

    private static final String DRIVER = "gpu.example.com";
    private static final String NAMESPACE = "ml";
    private static final int NODES = 8;
    private static final Duration WAIT = Duration.ofSeconds(90);
    /** Longer than the test: the closed static member keeps its partitions throughout. */
    private static final Duration SESSION_TIMEOUT = Duration.ofMinutes(2);
    private static final String FORWARDED = "X-Devhealth-Forwarded";
    /** With {@value #FORWARDED}: answer from this instance's copies read as they stand, standby ones too. */
    private static final String STANDBY_READ = "X-Devhealth-Standby-Read";
    private static final int DEVICES = 4;
    /** How often each node's first device changes before its others are first reported. */
    private static final int FLAPS = 60;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String FLEET = "/v1/fleet/summary";

    private final Instant t0 = Instant.now().truncatedTo(ChronoUnit.MILLIS).minus(Duration.ofMinutes(10));
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private ProcessorRun run;
    private long sequence;

    @BeforeEach
    void createTopics(EmbeddedKafkaCluster cluster) {
        run = new ProcessorRun(cluster, "standby-reads", 2);
    }

    @AfterEach
    void stop() {
        run.close();
    }

    @Test
    void shouldAnswerAGoneInstancesNodesAndPodsFromTheStandbyCopyMarkedStale(@TempDir Path tmp) throws Exception {
        Pair pair = startPair(tmp, true);
        Map<String, String> before = pair.answersOfTheLeaving();
        assertThat(before).as("the leaving instance holds some nodes' and pods' partitions").isNotEmpty();
        String fleetBefore = totals(get(pair.staying, FLEET, false).body());

        run.stop(pair.leaving);
        HttpResponse<String> fleet = get(pair.staying, FLEET, false);
        assertThat(fleet.statusCode()).as("the fleet summary: %s", fleet.body()).isEqualTo(200);
        assertThat(fleet.headers().firstValue(StandbyReads.STALE_HEADER)).as("the gone instance's part from standbys").contains("true");
        assertThat(totals(fleet.body())).as("every transition counted once").isEqualTo(fleetBefore).contains("\"total\":" + NODES);
        for (Map.Entry<String, String> held : before.entrySet()) {
            HttpResponse<String> answer = get(pair.staying, held.getKey(), false);
            assertThat(answer.statusCode()).as("%s asked of the staying instance: %s", held.getKey(), answer.body()).isEqualTo(200);
            assertThat(answer.headers().firstValue(StandbyReads.STALE_HEADER)).as("%s marked as a standby's answer", held.getKey())
                    .contains("true");
            assertThat(answer.body()).as("%s: what the gone instance answered", held.getKey()).isEqualTo(held.getValue());
        }
        for (String own : pair.pathsOfTheStaying()) {
            HttpResponse<String> answer = get(pair.staying, own, false);
            assertThat(answer.statusCode()).as(own).isEqualTo(200);
            assertThat(answer.headers().firstValue(StandbyReads.STALE_HEADER)).as("%s from the active copy", own).isEmpty();
        }
        assertThat(pair.staying.meters().get("devhealth.query.standby.reads").tag("outcome", "answered").counter().count())
                .isGreaterThanOrEqualTo(before.size());
    }

    @Test
    void shouldAnswerOnlyRetryShortlyWithoutStandbyReads(@TempDir Path tmp) throws Exception {
        Pair pair = startPair(tmp, false);
        Map<String, String> before = pair.answersOfTheLeaving();
        assertThat(before).isNotEmpty();

        run.stop(pair.leaving);
        for (String held : before.keySet()) {
            assertThat(get(pair.staying, held, false).statusCode()).as(held).isEqualTo(503);
        }
        assertThat(get(pair.staying, FLEET, false).statusCode()).as("the fleet summary without the gone instance's part").isEqualTo(503);
    }

    /**
     * An instance killed in the middle of a transaction leaves it open on the changelogs it wrote until the broker
     * aborts it: a copy restored with read_committed cannot pass its records, and Kafka Streams' lag, counted to the
     * log's end, counts them. Here a transaction is left open on the node stores' changelogs, 20 records each, with
     * a bound of 5: the standby copy, which holds everything committed, still answers the gone instance's nodes,
     * because its lag is taken against the last stable offset.
     */
    @Test
    void shouldAnswerFromAStandbyCopyThatHoldsEverythingCommittedWhileATransactionIsOpenOnItsChangelog(@TempDir Path tmp)
            throws Exception {
        Pair pair = startPair(tmp, true, Map.of(QueryConfig.STANDBY_MAX_LAG, "5"));
        Map<String, String> before = pair.answersOfTheLeaving();
        assertThat(before).as("the leaving instance holds some nodes' and pods' partitions").isNotEmpty();

        Map<String, Object> props = new HashMap<>(run.kafka.clientProperties());
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "left-open-" + run.applicationId);
        try (KafkaProducer<byte[], byte[]> killed = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            killed.initTransactions();
            killed.beginTransaction();
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (String store : List.of(DeviceHealthTopology.NODE_STATE_STORE, DeviceHealthTopology.DEVICE_STATE_STORE)) {
                for (int partition = 0; partition < 2; partition++) {
                    for (int i = 0; i < 20; i++) {
                        // A key: the changelogs are compacted. Never committed, so never restored.
                        sent.add(killed.send(new ProducerRecord<>(DeviceHealthTopology.changelog(run.applicationId, store), partition,
                                ("left-open-" + i).getBytes(StandardCharsets.UTF_8), null)));
                    }
                }
            }
            killed.flush();
            for (Future<RecordMetadata> record : sent) {
                record.get();
            }

            run.stop(pair.leaving);
            for (Map.Entry<String, String> held : before.entrySet()) {
                if (!held.getKey().startsWith("/v1/nodes/")) {
                    continue;
                }
                HttpResponse<String> answer = get(pair.staying, held.getKey(), false);
                assertThat(answer.statusCode()).as("%s asked of the staying instance: %s", held.getKey(), answer.body()).isEqualTo(200);
                assertThat(answer.headers().firstValue(StandbyReads.STALE_HEADER)).as("%s from the standby copy", held.getKey())
                        .contains("true");
                assertThat(answer.body()).as("%s: what the gone instance answered", held.getKey()).isEqualTo(held.getValue());
            }
            killed.abortTransaction();
        }
    }

    /**
     * A new instance's standby copy, while it restores, lacks whole devices however few records it lacks: the first
     * instance wrote each node's first device many times, then its three others once. Asked for its own copies
     * (as another instance asks it for a standby read) while its restore is slowed, the new instance answers
     * 503, retry shortly, or a node with all four devices; never a node with fewer, even with a bound in records
     * that a copy at offset 0 meets.
     */
    @Test
    void shouldNotAnswerFromAStandbyCopyThatIsStillRestoring(@TempDir Path tmp) throws Exception {
        Map<String, String> firstSettings = settings("first", true);
        QueryableProcessor first = QueryableRun.start(run, tmp.resolve("first"), firstSettings);
        for (int i = 0; i < NODES; i++) {
            for (int flap = 0; flap < FLAPS; flap++) {
                run.sendReport(node(i), report(node(i), "gpu-0", flap % 2 == 0 ? HealthStatus.UNHEALTHY : HealthStatus.HEALTHY,
                        t0.plusMillis(flap)));
            }
            for (int d = 1; d < DEVICES; d++) {
                run.sendReport(node(i), report(node(i), "gpu-" + d, HealthStatus.HEALTHY, t0.plusSeconds(1)));
            }
        }
        await("the first instance answers every node with its devices").atMost(WAIT).until(() -> {
            for (int i = 0; i < NODES; i++) {
                HttpResponse<String> answer = get(first, nodePath(i), true);
                if (answer.statusCode() != 200 || devicesIn(answer.body()) != DEVICES) {
                    return false;
                }
            }
            return true;
        });

        Map<String, String> secondSettings = settings("second", true);
        // Any copy within a million records may answer: the bound alone would let one at offset 0 answer.
        secondSettings.put(QueryConfig.STANDBY_MAX_LAG, "1000000");
        secondSettings.put("kafka.restore.consumer." + ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5");
        secondSettings.put("kafka.restore.consumer." + ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG, SlowRestore.class.getName());
        QueryableProcessor second = QueryableRun.start(run, tmp.resolve("second"), secondSettings);

        List<String> partial = new ArrayList<>();
        List<String> restoring = new ArrayList<>();
        await("the new instance answers every node from its own copies, each with its devices").atMost(WAIT)
                .pollInterval(Duration.ofMillis(20)).until(() -> {
                    boolean all = true;
                    for (int i = 0; i < NODES; i++) {
                        HttpResponse<String> answer = standbyRead(second, nodePath(i));
                        if (answer.statusCode() == 200 && devicesIn(answer.body()) != DEVICES) {
                            partial.add(nodePath(i) + " " + answer.body());
                        } else if (answer.statusCode() == 503 && answer.body().contains("is restoring")) {
                            restoring.add(nodePath(i) + " " + answer.body());
                        }
                        all &= answer.statusCode() == 200;
                    }
                    return all;
                });
        assertThat(partial).as("answers with fewer devices than the node has").isEmpty();
        assertThat(restoring).as("the new instance was asked while its copies restored").isNotEmpty();
    }

    /** Slows the restore consumer it is set on: every poll that returns records takes {@value #PAUSE_MS} ms longer. */
    public static final class SlowRestore implements ConsumerInterceptor<byte[], byte[]> {
        static final long PAUSE_MS = 40;

        @Override
        public ConsumerRecords<byte[], byte[]> onConsume(ConsumerRecords<byte[], byte[]> records) {
            if (!records.isEmpty()) {
                try {
                    Thread.sleep(PAUSE_MS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return records;
        }

        @Override
        public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {
        }

        @Override
        public void close() {
        }

        @Override
        public void configure(Map<String, ?> configs) {
        }
    }

    private static String nodePath(int i) {
        return "/v1/nodes/" + node(i) + "/devices";
    }

    private static int devicesIn(String nodeAnswer) throws Exception {
        return JSON.readTree(nodeAnswer).path("items").size();
    }

    /** Asks {@code app} for its own copies read as they stand, as another instance asks it for a standby read. */
    private HttpResponse<String> standbyRead(QueryableProcessor app, String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + app.queryAddress().port() + path))
                .timeout(Duration.ofSeconds(15)).header(FORWARDED, "1").header(STANDBY_READ, "1").GET().build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** Two instances over 2 partitions, each active for one and standby for the other, every node's and pod's state in both. */
    private Pair startPair(Path tmp, boolean standbyReads) throws Exception {
        return startPair(tmp, standbyReads, Map.of());
    }

    /** {@link #startPair(Path, boolean)} with {@code more} settings on both instances. */
    private Pair startPair(Path tmp, boolean standbyReads, Map<String, String> more) throws Exception {
        Map<String, String> firstSettings = settings("first", standbyReads);
        firstSettings.putAll(more);
        Map<String, String> secondSettings = settings("second", standbyReads);
        secondSettings.putAll(more);
        QueryableProcessor first = QueryableRun.start(run, tmp.resolve("first"), firstSettings);
        QueryableProcessor second = QueryableRun.start(run, tmp.resolve("second"), secondSettings);
        for (int i = 0; i < NODES; i++) {
            run.sendAllocations(allocation(node(i), t0.plusSeconds(i)));
            run.sendReport(node(i), report(node(i), t0.plusSeconds(i)));
        }
        Pair pair = new Pair(first, second);
        await("each instance active for one partition, standby for the other, and every node and pod answered")
                .atMost(WAIT).until(() -> pair.settled(first) && pair.settled(second) && pair.everyPathAnswered());
        return pair;
    }

    private Map<String, String> settings(String member, boolean standbyReads) {
        Map<String, String> settings = new HashMap<>();
        settings.put(QueryConfig.ADVERTISED_HOST, "127.0.0.1");
        settings.put(QueryConfig.STANDBY_READS, Boolean.toString(standbyReads));
        settings.put("kafka." + ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, run.applicationId + "-" + member);
        settings.put("kafka." + ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, Long.toString(SESSION_TIMEOUT.toMillis()));
        settings.put("kafka." + StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, "1");
        return settings;
    }

    private final class Pair {
        final QueryableProcessor leaving;
        final QueryableProcessor staying;

        Pair(QueryableProcessor leaving, QueryableProcessor staying) {
            this.leaving = leaving;
            this.staying = staying;
        }

        boolean settled(QueryableProcessor app) {
            if (app.streams().state() != KafkaStreams.State.RUNNING) {
                return false;
            }
            int active = 0;
            int standby = 0;
            for (ThreadMetadata thread : app.streams().metadataForLocalThreads()) {
                active += thread.activeTasks().size();
                standby += thread.standbyTasks().size();
            }
            return active > 0 && standby > 0;
        }

        boolean everyPathAnswered() throws Exception {
            for (String path : paths()) {
                if (get(leaving, path, false).statusCode() != 200 || get(staying, path, false).statusCode() != 200) {
                    return false;
                }
            }
            return get(staying, FLEET, false).body().contains("\"total\":" + NODES);
        }

        /** What the leaving instance answers from its own active copies, by path. */
        Map<String, String> answersOfTheLeaving() throws Exception {
            Map<String, String> answers = new HashMap<>();
            for (String path : paths()) {
                HttpResponse<String> own = get(leaving, path, true);
                if (own.statusCode() == 200) {
                    answers.put(path, own.body());
                }
            }
            return answers;
        }

        List<String> pathsOfTheStaying() throws Exception {
            List<String> own = new ArrayList<>();
            for (String path : paths()) {
                if (get(staying, path, true).statusCode() == 200) {
                    own.add(path);
                }
            }
            return own;
        }
    }

    /** The summary's totals object, as JSON text. */
    private static String totals(String summary) {
        int start = summary.indexOf("\"totals\":");
        return start < 0 ? summary : summary.substring(start, summary.indexOf('}', start) + 1);
    }

    private static List<String> paths() {
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < NODES; i++) {
            paths.add("/v1/nodes/" + node(i) + "/devices");
            paths.add("/v1/pods/" + NAMESPACE + "/" + pod(i) + "/devices");
        }
        return paths;
    }

    private static String node(int i) {
        return "node-" + i;
    }

    private static String pod(int i) {
        return "train-" + i;
    }

    private HttpResponse<String> get(QueryableProcessor app, String path, boolean ownStoresOnly) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + app.queryAddress().port() + path))
                .timeout(Duration.ofSeconds(15)).GET();
        if (ownStoresOnly) {
            request.header(FORWARDED, "1");
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private DeviceHealthReport report(String node, Instant at) {
        return report(node, "gpu-0", HealthStatus.HEALTHY, at);
    }

    private DeviceHealthReport report(String node, String device, HealthStatus health, Instant at) {
        return DeviceHealthReport.newBuilder().setNode(node).setSource(SourceKind.DRA).setSourceName(DRIVER)
                .setDevice(DeviceRef.newBuilder().setDriver(DRIVER).setPool(node).setDevice(device).build())
                .setHealth(health).setKind(ReportKind.CHANGE).setTimeoutSeconds(3600L)
                .setObservedAt(at).setCollectorEpoch(1).setSequence(++sequence).build();
    }

    /** The node's pod, alone on it, holding its gpu-0. */
    private NodeAllocations allocation(String node, Instant at) {
        int i = Integer.parseInt(node.substring("node-".length()));
        return NodeAllocations.newBuilder().setNode(node).setObservedAt(at).setCollectorEpoch(1).setSequence(++sequence)
                .setPods(List.of(new PodAllocation(NAMESPACE, pod(i), List.of(ContainerAllocation.newBuilder().setName("main")
                        .setClaims(List.of(new ClaimAllocation(pod(i) + "-gpu", NAMESPACE, List.of(ClaimDevice.newBuilder()
                                .setDriver(DRIVER).setPool(node).setDevice("gpu-0").build())))).build()))))
                .build();
    }
}
