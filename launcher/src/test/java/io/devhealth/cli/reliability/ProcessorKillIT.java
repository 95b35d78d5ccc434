package io.devhealth.cli.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.ClaimAllocation;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.ContainerAllocation;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.FleetStats;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.StatsDimension;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
import io.devhealth.testkit.kafka.OwnBroker;
import io.devhealth.testkit.kafka.TopicReader;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The stream-processor, in its own JVM, killed with SIGKILL at random points while reports stream in
 * and restarted on the same state directory: health-transitions (read_committed) must hold exactly
 * the transitions an oracle computes from the input, per device and in order; no duplicate, none
 * missing. 3 kills by default, 10 with {@code -Ddevhealth.fault.long=true}.
 */
@Tag("fault")
@ExtendWith(KafkaClusterExtension.class)
class ProcessorKillIT {

    private static final boolean LONG = Boolean.getBoolean("devhealth.fault.long");
    private static final int KILLS = Integer.getInteger("devhealth.fault.kills", LONG ? 10 : 5);
    private static final int NODES = 6;
    private static final int DEVICES_PER_NODE = 20;
    private static final String DRIVER = "gpu.example.com";
    /** Health values a scripted report picks from; repeats are allowed (they must not emit anything). */
    private static final HealthStatus[] HEALTHS = {HealthStatus.HEALTHY, HealthStatus.UNHEALTHY, HealthStatus.UNKNOWN};

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

    @Test
    void shouldEmitEveryTransitionExactlyOnceWhenTheProcessorIsKilledUnderLoad() throws Exception {
        long started = System.nanoTime();
        TransitionOracle oracle = new TransitionOracle();
        transitions = TopicReader.of(kafka, topics.healthTransitions()).deserializers(new StringDeserializer(),
                AvroSerde.of(HealthTransition.class, SchemaRegistries.inMemory(registryName)).deserializer()).open();
        Load load = new Load(oracle);
        Thread producer = new Thread(load, "reports-producer");
        // A daemon: a failed run must not leave the fork producing.
        producer.setDaemon(true);
        producer.start();

        List<Long> killedAfterMs = new ArrayList<>();
        List<Long> startupMs = new ArrayList<>();
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
        }
        load.stop();
        producer.join();

        long t0 = System.nanoTime();
        startProcessor("final");
        startupMs.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        int expectedTotal = oracle.total();
        // On a timeout the figures below still say what is missing or duplicated: no failing wait here.
        awaitUpTo(() -> transitions.poll().size() >= expectedTotal, Duration.ofSeconds(120));
        // Anything emitted twice would show up now.
        List<ConsumerRecord<String, HealthTransition>> received = transitions.readFor(Duration.ofSeconds(3));

        Map<String, List<String>> actual = new LinkedHashMap<>();
        Set<String> ids = new HashSet<>();
        Set<String> contents = new HashSet<>();
        int duplicateIds = 0;
        int duplicateContents = 0;
        for (ConsumerRecord<String, HealthTransition> record : received) {
            HealthTransition t = record.value();
            if (!ids.add(t.getId())) {
                duplicateIds++;
            }
            if (!contents.add(record.key() + "|" + t.getFrom() + "|" + t.getTo() + "|" + t.getAt())) {
                duplicateContents++;
            }
            actual.computeIfAbsent(record.key(), k -> new ArrayList<>()).add(TransitionOracle.step(t.getFrom(), t.getTo()));
        }
        Map<String, List<String>> expected = oracle.expected();
        int missing = 0;
        int devicesWrong = 0;
        for (Map.Entry<String, List<String>> device : expected.entrySet()) {
            List<String> got = actual.getOrDefault(device.getKey(), List.of());
            missing += Math.max(0, device.getValue().size() - got.size());
            devicesWrong += device.getValue().equals(got) ? 0 : 1;
        }
        System.out.printf("processor-kill seed=%d kills=%d reports=%d expectedTransitions=%d receivedTransitions=%d duplicateIds=%d "
                        + "duplicateContents=%d missing=%d devices=%d devicesWithWrongSequence=%d killDelaysMs=%s startupToRunningMs=%s elapsedS=%d%n",
                seed, KILLS, load.sent(), expectedTotal, received.size(), duplicateIds, duplicateContents, missing, expected.size(), devicesWrong,
                killedAfterMs, startupMs, TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started));

        assertThat(duplicateIds).as("transitions with the same id").isZero();
        assertThat(duplicateContents).as("transitions with the same device, from, to and time").isZero();
        assertThat(missing).as("expected transitions not emitted").isZero();
        assertThat(received).hasSize(expectedTotal);
        assertThat(actual).as("per device, the exact sequence of from->to").isEqualTo(expected);

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
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:TieredStopAtLevel=1"));
        String trusted = System.getProperty("org.apache.avro.SERIALIZABLE_PACKAGES");
        if (trusted != null) {
            command.add("-Dorg.apache.avro.SERIALIZABLE_PACKAGES=" + trusted);
        }
        command.addAll(List.of("-cp", classpath, ProcessorProcessMain.class.getName(), kafka.bootstrapServers(), registryName,
                tmp.resolve("state").toString(), applicationId));
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

    /** The collectors of {@value #NODES} nodes: scripted random health changes, and allocation snapshots now and then. */
    private final class Load implements Runnable {
        private final TransitionOracle oracle;
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final Map<String, Long> sequences = new HashMap<>();
        private final long epoch = System.currentTimeMillis();
        private final Instant base = Instant.now();
        private volatile long sent;

        Load(TransitionOracle oracle) {
            this.oracle = oracle;
        }

        void stop() {
            running.set(false);
        }

        long sent() {
            return sent;
        }

        @Override
        public void run() {
            Map<String, Object> props = new HashMap<>(kafka.clientProperties());
            props.put(ProducerConfig.ACKS_CONFIG, "all");
            props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
            props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
            var registry = SchemaRegistries.inMemory(registryName);
            try (KafkaProducer<String, NodeEvent> events = new KafkaProducer<>(props, new StringSerializer(),
                    AvroSerde.of(NodeEvent.class, registry).serializer())) {
                long round = 0;
                while (running.get()) {
                    for (int i = 0; i < 40; i++) {
                        String node = "node-" + random.nextInt(NODES);
                        String device = "gpu-" + random.nextInt(DEVICES_PER_NODE);
                        HealthStatus health = HEALTHS[random.nextInt(HEALTHS.length)];
                        // A third are keep-alives: of the device's current health a refresh the processor keeps in
                        // its node's state (PendingRefresh), which every restart must restore with the device.
                        ReportKind kind = random.nextInt(3) == 0 ? ReportKind.KEEPALIVE : ReportKind.CHANGE;
                        long sequence = sequences.merge(node, 1L, Long::sum);
                        DeviceHealthReport report = DeviceHealthReport.newBuilder()
                                .setNode(node).setSource(SourceKind.DRA).setSourceName(DRIVER)
                                .setDevice(DeviceRef.newBuilder().setDriver(DRIVER).setPool(node).setDevice(device).build())
                                .setHealth(health).setKind(kind).setMessage(health == HealthStatus.UNHEALTHY ? "XID 79" : null)
                                .setObservedAt(base.plusMillis(sequence)).setCollectorEpoch(epoch).setSequence(sequence).build();
                        // Key = node, as the collector writes: per-device order is the partition's order.
                        events.send(new ProducerRecord<>(topics.nodeEvents(), node, new NodeEvent(report)));
                        oracle.reported(node + "/" + DRIVER + "/" + node + "/" + device, health);
                        sent++;
                    }
                    if (round++ % 25 == 0) {
                        String node = "node-" + random.nextInt(NODES);
                        events.send(new ProducerRecord<>(topics.nodeEvents(), node, new NodeEvent(snapshot(node))));
                    }
                    events.flush();
                    Thread.sleep(50);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        private NodeAllocations snapshot(String node) {
            long sequence = sequences.merge(node, 1L, Long::sum);
            String device = "gpu-" + random.nextInt(DEVICES_PER_NODE);
            ClaimDevice claimDevice = ClaimDevice.newBuilder().setDriver(DRIVER).setPool(node).setDevice(device)
                    .setCdiIds(List.of(DRIVER + "/gpu=" + device)).build();
            return NodeAllocations.newBuilder().setNode(node).setObservedAt(base.plusMillis(sequence))
                    .setCollectorEpoch(epoch).setSequence(sequence)
                    .setPods(List.of(new PodAllocation("ml", "train-" + node, List.of(ContainerAllocation.newBuilder().setName("main")
                            .setClaims(List.of(new ClaimAllocation("train-gpu", "ml", List.of(claimDevice)))).build()))))
                    .build();
        }
    }
}
