package io.devhealth.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.processor.ProcessorConfig;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.FleetStats;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.StatsDimension;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.simulators.process.Ports;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
import io.devhealth.testkit.kafka.OwnBroker;
import io.devhealth.testkit.kafka.TopicReader;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The stream-processor, in its own JVM, killed with SIGKILL at random points while reports stream in
 * and restarted on the same state directory: health-transitions (read_committed) must hold exactly
 * the transitions an oracle computes from the input, per device and in order; no duplicate, none
 * missing; the fleet counts count each once; and each pod's last status shows its device as the
 * device's last report left it. 5 kills by default, 10 with {@code -Ddevhealth.fault.long=true}.
 *
 * <p>The load replays collector spools, as a collector does after its own restart: every second one
 * node's, and every node's while the processor is down after each kill, so that replays reach
 * back across the kill into input the killed instance had committed and input it had not. They are
 * duplicates (same epoch, sequence and content) and must change nothing. Last, at rest, after the
 * final instance has committed everything: one more kill, every spool replayed, and an instance whose
 * only input is that replay must count every record of it in {@code devhealth_processor_duplicates_total}
 * and emit nothing; the de-duplication watermarks it drops them by come from the changelog alone.
 */
@Tag("fault")
@ExtendWith(KafkaClusterExtension.class)
class ProcessorKillIT {

    private static final boolean LONG = Boolean.getBoolean("devhealth.fault.long");
    private static final int KILLS = Integer.getInteger("devhealth.fault.kills", LONG ? 10 : 5);
    private static final int NODES = 6;
    private static final int DEVICES_PER_NODE = 20;
    /** One node's spool replayed every second (20 rounds of 50 ms). */
    private static final int REPLAY_EVERY_ROUNDS = 20;
    private static final String DUPLICATES_METRIC = "devhealth_processor_duplicates_total";

    @TempDir
    Path tmp;

    private final Topics topics = Topics.withDefaultPrefix();
    private final String registryName = "kill-" + UUID.randomUUID();
    private final String applicationId = "devhealth-kill-" + UUID.randomUUID().toString().substring(0, 8);
    private final long seed = Long.getLong("devhealth.fault.seed", System.nanoTime());
    private final Random random = new Random(seed);
    private EmbeddedKafkaCluster kafka;
    private Process processor;
    private TopicReader<String, HealthTransition> transitions;
    private int streamThreads = 1;
    /** The running instance's query port, which serves /metrics. */
    private int queryPort;

    /** A broker of the test's own: the processor runs on the default topic names. */
    @BeforeEach
    void startBroker(@OwnBroker EmbeddedKafkaCluster own) {
        kafka = own;
        kafka.createTopics(3, topics.nodeEvents(), topics.healthTransitions(), topics.podVerdicts(),
                topics.deadLetters(), topics.fleetStats());
        kafka.createCompactedTopics(3, topics.podDeviceStatus());
        SharedSchemaIds.registerAll(registryName, topics);
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (transitions != null) {
            transitions.close();
        }
        if (processor != null) {
            processor.destroyForcibly();
            processor.waitFor(30, TimeUnit.SECONDS);
        }
    }

    /**
     * @param streamThreads the processor's {@link ProcessorConfig#STREAM_THREADS}: with two, each thread commits its
     *                      own transactions, and a kill lands between them
     */
    @ParameterizedTest(name = "stream threads: {0}")
    @ValueSource(ints = {1, 2})
    void shouldEmitEveryTransitionExactlyOnceWhenTheProcessorIsKilledUnderLoad(int streamThreads) throws Exception {
        this.streamThreads = streamThreads;
        long started = System.nanoTime();
        TransitionOracle oracle = new TransitionOracle();
        transitions = TopicReader.of(kafka, topics.healthTransitions()).deserializers(new StringDeserializer(),
                AvroSerde.of(HealthTransition.class, SchemaRegistries.inMemory(registryName)).deserializer()).open();
        NodeEventLoad load = new NodeEventLoad(kafka, topics, registryName, oracle, random, NODES, DEVICES_PER_NODE, 40,
                NodeEventLoad.RANDOM_MIX).replayingSpool(REPLAY_EVERY_ROUNDS);
        Thread producer = new Thread(load, "reports-producer");
        // A daemon: a failed run must not leave the fork producing.
        producer.setDaemon(true);
        producer.start();

        List<Long> killedAfterMs = new ArrayList<>();
        List<Long> startupMs = new ArrayList<>();
        int replayedAtKills = 0;
        for (int kill = 1; kill <= KILLS; kill++) {
            long t0 = System.nanoTime();
            startProcessor("run-" + kill);
            startupMs.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
            // Caught up with everything committed so far, as a reader that kept reading would be.
            int before = transitions.readToEnd(Duration.ofSeconds(60)).size();
            // Kill only once this instance has committed output: the kill lands in the middle of real work.
            transitions.readUntil(read -> read.size() > before, Duration.ofSeconds(60));
            long delay = 200 + random.nextInt(1_800);
            Thread.sleep(delay);
            processor.destroyForcibly();
            assertThat(processor.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(processor.exitValue()).as("killed with SIGKILL").isEqualTo(137);
            killedAfterMs.add(delay);
            // Sent while no instance runs: the next one reads them after the input the killed one had not committed.
            replayedAtKills += load.replaySpools();
        }
        // Paused, not stopped: the replay at rest below sends through the load's producer.
        load.pause();

        long t0 = System.nanoTime();
        startProcessor("final");
        startupMs.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        int expectedTotal = oracle.total();
        // On a timeout the figures below still say what is missing or duplicated: no failing wait here.
        awaitUpTo(() -> transitions.poll().size() >= expectedTotal, Duration.ofSeconds(120));
        // Anything emitted twice would show up now.
        List<ConsumerRecord<String, HealthTransition>> received = transitions.readFor(Duration.ofSeconds(3));

        TransitionOracle.Check check = oracle.check(received);
        System.out.printf("processor-kill seed=%d kills=%d reports=%d replayed=%d replayedAtKills=%d expectedTransitions=%d receivedTransitions=%d duplicateIds=%d "
                        + "duplicateContents=%d missing=%d devices=%d devicesWithWrongSequence=%d killDelaysMs=%s startupToRunningMs=%s elapsedS=%d%n",
                seed, KILLS, load.sent(), load.replayed(), replayedAtKills, expectedTotal, received.size(), check.duplicateIds(), check.duplicateContents(), check.missing(),
                check.devices(), check.devicesWithWrongSequence(),
                killedAfterMs, startupMs, TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started));

        assertThat(check.duplicateIds()).as("transitions with the same id").isZero();
        assertThat(check.duplicateContents()).as("transitions with the same device, from, to and time").isZero();
        assertThat(check.missing()).as("expected transitions not emitted").isZero();
        assertThat(received).hasSize(expectedTotal);
        assertThat(check.actual()).as("per device, the exact sequence of from->to").isEqualTo(check.expected());

        // The fleet counts, folded before their repartition and kept between flushes in a changelogged
        // store, must count every committed transition exactly once too, across the same kills.
        try (TopicReader<String, FleetStats> fleet = TopicReader.of(kafka, topics.fleetStats()).deserializers(new StringDeserializer(),
                AvroSerde.of(FleetStats.class, SchemaRegistries.inMemory(registryName)).deserializer()).open()) {
            awaitUpTo(() -> counted(fleet.poll(), StatsDimension.NODE) >= expectedTotal, Duration.ofSeconds(60));
            List<ConsumerRecord<String, FleetStats>> stats = fleet.readFor(Duration.ofSeconds(3));
            System.out.printf("processor-kill fleet counts: by node %d, by driver %d, transitions %d%n",
                    counted(stats, StatsDimension.NODE), counted(stats, StatsDimension.DRIVER), expectedTotal);
            assertThat(counted(stats, StatsDimension.NODE)).as("transitions counted by node").isEqualTo(expectedTotal);
            assertThat(counted(stats, StatsDimension.DRIVER)).as("transitions counted by driver").isEqualTo(expectedTotal);
        }

        // Pod statuses are emitted once per commit, from the node store's commit hook, in the transaction
        // of the records that changed them: across the same kills, each pod's last committed status must
        // show the device its node's last allocation gave it, as the device's last report left it.
        Map<String, String> expectedPods = new TreeMap<>();
        load.podDevices().forEach((node, device) -> expectedPods.put(NodeEventLoad.POD_NAMESPACE + "/" + NodeEventLoad.pod(node),
                device + "=" + oracle.current(NodeEventLoad.deviceKey(node, device))));
        try (TopicReader<String, PodDeviceStatus> statuses = TopicReader.of(kafka, topics.podDeviceStatus()).deserializers(
                new StringDeserializer(), AvroSerde.of(PodDeviceStatus.class, SchemaRegistries.inMemory(registryName)).deserializer()).open()) {
            Map<String, String> lastStatuses = new TreeMap<>();
            for (ConsumerRecord<String, PodDeviceStatus> status : statuses.readToEnd(Duration.ofSeconds(60))) {
                if (status.value() != null) {
                    lastStatuses.put(status.key(), status.value().getContainers().stream().flatMap(c -> c.getClaims().stream())
                            .flatMap(c -> c.getDevices().stream()).map(d -> d.getDevice().getDevice() + "=" + d.getHealth())
                            .collect(Collectors.joining(",")));
                }
            }
            System.out.printf("processor-kill pod statuses: %s%n", lastStatuses);
            assertThat(lastStatuses).as("each pod's last status: its device and the device's health").isEqualTo(expectedPods);
        }

        // At rest: once the final instance has committed all input, a kill, every spool replayed, and a new
        // instance whose only input is the replay. It must drop each replayed record by the watermarks restored
        // from the changelog (watermarks kept in memory alone would let them all through) and emit nothing.
        awaitUpTo(this::allInputCommitted, Duration.ofSeconds(60));
        assertThat(allInputCommitted()).as("node-events committed to its end by the final instance").isTrue();
        processor.destroyForcibly();
        assertThat(processor.waitFor(30, TimeUnit.SECONDS)).isTrue();
        int replayedAtRest = load.replaySpools();
        load.stop();
        producer.join();
        startProcessor("after-replay");
        awaitUpTo(() -> duplicatesDropped() >= replayedAtRest, Duration.ofSeconds(60));
        long dropped = duplicatesDropped();
        int transitionsAfterReplay = transitions.readFor(Duration.ofSeconds(2)).size() - received.size();
        System.out.printf("processor-kill replay at rest: replayed=%d droppedAsDuplicates=%d newTransitions=%d%n", replayedAtRest,
                dropped, transitionsAfterReplay);
        assertThat(dropped).as("records of the replay at rest dropped as duplicates (" + DUPLICATES_METRIC + ")")
                .isEqualTo(replayedAtRest);
        assertThat(transitionsAfterReplay).as("transitions emitted for the replay at rest").isZero();
    }

    /** Whether the processor's group has committed every node-events partition to its end. */
    private boolean allInputCommitted() {
        try {
            Map<TopicPartition, OffsetAndMetadata> committed = kafka.admin().listConsumerGroupOffsets(applicationId)
                    .partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
            Map<TopicPartition, OffsetSpec> ends = new HashMap<>();
            for (TopicPartition partition : kafka.admin().describeTopics(List.of(topics.nodeEvents())).allTopicNames()
                    .get(10, TimeUnit.SECONDS).get(topics.nodeEvents()).partitions().stream()
                    .map(p -> new TopicPartition(topics.nodeEvents(), p.partition())).toList()) {
                ends.put(partition, OffsetSpec.latest());
            }
            var latest = kafka.admin().listOffsets(ends).all().get(10, TimeUnit.SECONDS);
            return ends.keySet().stream().allMatch(partition -> committed.get(partition) != null
                    && committed.get(partition).offset() == latest.get(partition).offset());
        } catch (ExecutionException | TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The running instance's {@value #DUPLICATES_METRIC}, all kinds summed; -1 while its /metrics does not answer. */
    private long duplicatesDropped() {
        try {
            HttpResponse<String> metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + queryPort + "/metrics")).timeout(Duration.ofSeconds(10)).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            if (metrics.statusCode() != 200) {
                return -1;
            }
            // Prometheus text: name{labels} value
            return Math.round(metrics.body().lines().filter(line -> line.startsWith(DUPLICATES_METRIC + "{"))
                    .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1))).sum());
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** The transitions fleet-stats counted in {@code dimension}: the latest counts of each window, summed. */
    private static long counted(List<ConsumerRecord<String, FleetStats>> updates, StatsDimension dimension) {
        Map<String, Long> latest = new HashMap<>();
        for (ConsumerRecord<String, FleetStats> update : updates) {
            FleetStats s = update.value();
            if (s.getDimension() == dimension) {
                latest.put(update.key(), s.getToHealthy() + s.getToUnhealthy() + s.getToUnknown());
            }
        }
        return latest.values().stream().mapToLong(Long::longValue).sum();
    }

    private void startProcessor(String run) throws IOException, InterruptedException {
        queryPort = Ports.free();
        List<String> command = ChildJvm.command(ProcessorProcessMain.class,
                List.of("-D" + ProcessorProcessMain.OPTION_PREFIX + ProcessorConfig.STREAM_THREADS + "=" + streamThreads),
                List.of(kafka.bootstrapServers(), registryName, tmp.resolve("state").toString(), applicationId, "0",
                        Integer.toString(queryPort)));
        processor = new ProcessBuilder(command).redirectErrorStream(true).start();
        CountDownLatch isRunning = new CountDownLatch(1);
        Path log = tmp.resolve("processor-" + run + ".log");
        Process child = processor;
        Thread drain = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
                 BufferedWriter file = Files.newBufferedWriter(log)) {
                String line;
                while ((line = out.readLine()) != null) {
                    file.write(line);
                    file.newLine();
                    if (line.contains(ProcessorProcessMain.RUNNING_LINE)) {
                        isRunning.countDown();
                    }
                }
            } catch (IOException e) {
                // The child was killed: its pipe closes mid-line.
            }
        }, "processor-output-" + run);
        drain.setDaemon(true);
        drain.start();
        if (!isRunning.await(90, TimeUnit.SECONDS)) {
            throw new AssertionError("processor " + run + " did not reach RUNNING; log: " + log);
        }
    }

    private static boolean awaitUpTo(java.util.function.BooleanSupplier condition, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(50);
        }
        return true;
    }
}
