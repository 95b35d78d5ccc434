package io.devhealth.bench;

import io.devhealth.processor.DeviceHealthTopology;
import io.devhealth.processor.ProcessorClients;
import io.devhealth.processor.ProcessorConfig;
import io.devhealth.processor.ProcessorSerdes;
import io.devhealth.processor.StreamProcessorApp;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.avro.NodeHeartbeat;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.schema.serde.SchemaRegistryClient;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;

/**
 * A flap storm against the production processor (exactly-once, default settings but a shorter quiet
 * period): {@code devices} GPUs whose health flips {@code flipsPerSecond} times a second each, sent in
 * real time for {@code seconds}, then keep-alives of the last word until the holds end. Prints how
 * many transitions each device made (in all, and from the start of its hold on), and the processor's
 * lag on node-events sampled every 250 ms, in records and in seconds of input.
 *
 * <p>A processor meets a storm warm: it has been running on keep-alives and changes for hours, its
 * code compiled. A fresh JVM spends the first tens of seconds compiling (the JIT took more CPU than
 * the stream thread in the first-contact runs of {@link ThroughputBenchmark}), so the same storm is
 * first sent to other nodes for {@code warmupSeconds} and only the second one is measured; with 0 the
 * cold figure is measured.
 *
 * <pre>{@code
 * java -cp "$CP" io.devhealth.bench.FlapStormBenchmark 1000 10 30 20 30   # devices, flips/s each, storm s, quiet s, warm-up s
 * }</pre>
 */
public final class FlapStormBenchmark {

    private static final int DEVICES_PER_NODE = 8;
    private static final String DRIVER = "gpu.nvidia.com";
    private static final long TICK_MS = 100;

    private FlapStormBenchmark() {}

    public static void main(String[] args) throws Exception {
        int devices = args.length > 0 ? Integer.parseInt(args[0]) : 1_000;
        int flipsPerSecond = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 30;
        int quietSeconds = args.length > 3 ? Integer.parseInt(args[3]) : 20;
        int warmupSeconds = args.length > 4 ? Integer.parseInt(args[4]) : 30;
        int nodes = (devices + DEVICES_PER_NODE - 1) / DEVICES_PER_NODE;
        double rate = (double) devices * flipsPerSecond;
        System.out.printf(Locale.ROOT, "flap storm: %,d devices on %,d nodes, %d flips/s each (%,.0f reports/s) for %d s, "
                + "quiet period %d s, warm-up %d s, %d cores, JDK %s%n", devices, nodes, flipsPerSecond, rate, seconds, quietSeconds,
                warmupSeconds,
                Runtime.getRuntime().availableProcessors(), Runtime.version());
        Topics topics = new Topics("flap.");
        SchemaRegistryClient registry = SchemaRegistries.inMemory("flap-storm");
        try (EmbeddedKafkaCluster kafka = EmbeddedKafkaCluster.start()) {
            kafka.createTopics(3, topics.nodeEvents(), topics.healthTransitions(), topics.podVerdicts(), topics.podDeviceStatus(), topics.fleetStats(),
                    topics.deadLetters());
            String applicationId = "flap-storm-processor";
            ProcessorConfig config = new ProcessorConfig(Map.of(
                    ProcessorConfig.BOOTSTRAP_SERVERS, kafka.bootstrapServers(),
                    ProcessorConfig.SCHEMA_REGISTRY_URL, "mem://flap-storm",
                    ProcessorConfig.TOPIC_PREFIX, topics.prefix(),
                    ProcessorConfig.APPLICATION_ID, applicationId,
                    ProcessorConfig.STATE_DIR, Files.createTempDirectory("dh-flap").toString(),
                    ProcessorConfig.FLAP_QUIET, Integer.toString(quietSeconds)));
            System.out.printf(Locale.ROOT, "damping: %s%n", config.flapPolicy().defaultLimits());
            CountDownLatch running = new CountDownLatch(1);
            try (KafkaStreams streams = new KafkaStreams(DeviceHealthTopology.build(topics, ProcessorSerdes.over(registry),
                    config.topologyOptions(new SimpleMeterRegistry())), StreamProcessorApp.streamsProperties(config),
                    new ProcessorClients())) {
                streams.setStateListener((now, before) -> {
                    if (now == KafkaStreams.State.RUNNING) {
                        running.countDown();
                    }
                });
                streams.start();
                if (!running.await(120, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("processor did not reach RUNNING");
                }
                if (warmupSeconds > 0) {
                    storm(kafka, topics, registry, "warm-node-", devices, nodes, flipsPerSecond, warmupSeconds, 5);
                    long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
                    while (lag(kafka.admin(), applicationId, topics.nodeEvents()) > 0) {
                        if (System.nanoTime() > deadline) {
                            throw new IllegalStateException("the warm-up storm was not worked off within 3 minutes: the storm would meet a "
                                    + "backlog, not a warm processor");
                        }
                        Thread.sleep(250);
                    }
                }
                List<Long> lags = new ArrayList<>();
                Thread sampler = new Thread(() -> sampleLag(kafka.admin(), applicationId, topics.nodeEvents(), lags), "lag-sampler");
                sampler.setDaemon(true);
                sampler.start();
                long sent = storm(kafka, topics, registry, "node-", devices, nodes, flipsPerSecond, seconds, quietSeconds + 10);
                sampler.interrupt();
                sampler.join();
                Map<String, int[]> perDevice = transitions(kafka, topics, registry, devices);
                report(devices, sent, rate, lags, perDevice);
                // Every device flipped, so every device has a transition (its first word at least): fewer means reports were lost.
                if (perDevice.size() < devices) {
                    throw new IllegalStateException(String.format(Locale.ROOT, "transitions from %,d of %,d devices: the processor dropped "
                            + "reports, the figures above count less than the storm", perDevice.size(), devices));
                }
            }
        }
    }

    /** Sends the storm in real time, then keep-alives and heartbeats through the quiet period; returns the reports sent. */
    private static long storm(EmbeddedKafkaCluster kafka, Topics topics, SchemaRegistryClient registry, String nodePrefix, int devices,
                              int nodes, int flipsPerSecond, int seconds, int quietSeconds) throws InterruptedException {
        Map<String, Object> props = new HashMap<>(kafka.clientProperties());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        long epoch = System.currentTimeMillis();
        long[] sequences = new long[nodes];
        HealthStatus[] word = new HealthStatus[devices];
        long sent = 0;
        try (KafkaProducer<String, NodeEvent> producer = new KafkaProducer<>(props, new StringSerializer(),
                AvroSerde.of(NodeEvent.class, registry).serializer())) {
            long start = System.currentTimeMillis();
            long ticks = (seconds + quietSeconds) * 1000L / TICK_MS;
            long stormTicks = seconds * 1000L / TICK_MS;
            int flipsPerTick = Math.max(1, (int) (flipsPerSecond * TICK_MS / 1000));
            for (long tick = 0; tick < ticks; tick++) {
                long due = start + tick * TICK_MS;
                long wait = due - System.currentTimeMillis();
                if (wait > 0) {
                    Thread.sleep(wait);
                }
                Instant now = Instant.ofEpochMilli(Math.max(due, System.currentTimeMillis()));
                boolean inStorm = tick < stormTicks;
                boolean keepAliveTick = tick % (10_000 / TICK_MS) == 0;
                for (int d = 0; d < devices; d++) {
                    if (!inStorm && !keepAliveTick) {
                        break;
                    }
                    int node = d / DEVICES_PER_NODE;
                    for (int f = 0; f < (inStorm ? flipsPerTick : 1); f++) {
                        HealthStatus health = inStorm ? (word[d] == HealthStatus.HEALTHY ? HealthStatus.UNHEALTHY : HealthStatus.HEALTHY) : word[d];
                        word[d] = health;
                        String name = nodePrefix + node;
                        DeviceHealthReport report = DeviceHealthReport.newBuilder().setNode(name).setSource(SourceKind.DRA)
                                .setSourceName(DRIVER)
                                .setDevice(DeviceRef.newBuilder().setDriver(DRIVER).setPool(name).setDevice("gpu-" + d % DEVICES_PER_NODE).build())
                                .setHealth(health).setKind(inStorm ? ReportKind.CHANGE : ReportKind.KEEPALIVE)
                                .setReason(health == HealthStatus.UNHEALTHY ? "XID-45" : null)
                                .setObservedAt(now.plusMillis(f)).setCollectorEpoch(epoch).setSequence(++sequences[node]).build();
                        producer.send(new ProducerRecord<>(topics.nodeEvents(), name, new NodeEvent(report)));
                        sent++;
                    }
                }
                if (tick % (5_000 / TICK_MS) == 0) {
                    for (int node = 0; node < nodes; node++) {
                        NodeHeartbeat heartbeat = NodeHeartbeat.newBuilder().setNode(nodePrefix + node).setObservedAt(now)
                                .setCollectorEpoch(epoch).setSequence(++sequences[node]).build();
                        producer.send(new ProducerRecord<>(topics.nodeEvents(), nodePrefix + node, new NodeEvent(heartbeat)));
                    }
                }
            }
            producer.flush();
        }
        // Let the processor commit what it read last.
        Thread.sleep(3_000);
        return sent;
    }

    /** The processor's lag on node-events (end offset − committed), every 250 ms until interrupted. */
    private static void sampleLag(Admin admin, String group, String topic, List<Long> lags) {
        try {
            while (!Thread.currentThread().isInterrupted()) {
                long lag = lag(admin, group, topic);
                if (Thread.currentThread().isInterrupted()) {
                    break;
                }
                synchronized (lags) {
                    lags.add(lag);
                }
                Thread.sleep(250);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Records of node-events the processor has not committed yet. */
    private static long lag(Admin admin, String group, String topic) {
        try {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            long lag = 0;
            for (int p = 0; p < 3; p++) {
                TopicPartition tp = new TopicPartition(topic, p);
                long end = admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get().offset();
                OffsetAndMetadata at = committed.get(tp);
                lag += Math.max(0, end - (at == null ? 0 : at.offset()));
            }
            return lag;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Long.MAX_VALUE;
        } catch (Exception e) {
            throw new IllegalStateException("cannot read the processor's lag", e);
        }
    }

    /** Per device: [transitions in all, transitions from the start of its first hold on]. */
    private static Map<String, int[]> transitions(EmbeddedKafkaCluster kafka, Topics topics, SchemaRegistryClient registry, int devices) {
        Map<String, Object> props = new HashMap<>(kafka.clientProperties());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "flap-storm-reader");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        Map<String, int[]> perDevice = new HashMap<>();
        try (KafkaConsumer<String, HealthTransition> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                AvroSerde.of(HealthTransition.class, registry).deserializer())) {
            consumer.subscribe(List.of(topics.healthTransitions()));
            long idleSince = System.nanoTime();
            while (System.nanoTime() - idleSince < Duration.ofSeconds(5).toNanos()) {
                for (ConsumerRecord<String, HealthTransition> record : consumer.poll(Duration.ofMillis(200))) {
                    idleSince = System.nanoTime();
                    if (!record.value().getNode().startsWith("node-")) {
                        continue; // the warm-up's
                    }
                    int[] counts = perDevice.computeIfAbsent(record.key(), k -> new int[2]);
                    counts[0]++;
                    if (counts[1] > 0 || "Flapping".equals(record.value().getReason())) {
                        counts[1]++;
                    }
                }
            }
        }
        return perDevice;
    }

    private static void report(int devices, long sent, double rate, List<Long> lags, Map<String, int[]> perDevice) {
        List<Long> sorted;
        synchronized (lags) {
            sorted = lags.stream().sorted().toList();
        }
        long total = perDevice.values().stream().mapToLong(c -> c[0]).sum();
        int maxAll = perDevice.values().stream().mapToInt(c -> c[0]).max().orElse(0);
        int maxHeld = perDevice.values().stream().mapToInt(c -> c[1]).max().orElse(0);
        long held = perDevice.values().stream().filter(c -> c[1] > 0).count();
        System.out.printf(Locale.ROOT, "reports sent: %,d; transitions: %,d (%.4f per report) from %,d of %,d devices%n", sent, total,
                (double) total / sent, perDevice.size(), devices);
        System.out.printf(Locale.ROOT, "per device: at most %d transitions in all; %,d devices held, at most %d transitions from the "
                + "start of the hold on (its start and its end)%n", maxAll, held, maxHeld);
        if (Boolean.getBoolean("devhealth.bench.flap.series")) {
            synchronized (lags) {
                System.out.println("lag samples, every 250 ms: " + lags);
            }
        }
        if (!sorted.isEmpty()) {
            long p50 = sorted.get(sorted.size() / 2);
            long p99 = sorted.get(Math.min(sorted.size() - 1, (int) (sorted.size() * 0.99)));
            long max = sorted.get(sorted.size() - 1);
            System.out.printf(Locale.ROOT, "processor lag on node-events (%d samples): p50 %,d records (%.2f s of input), p99 %,d (%.2f s), "
                    + "max %,d (%.2f s)%n", sorted.size(), p50, p50 / rate, p99, p99 / rate, max, max / rate);
        }
    }
}
