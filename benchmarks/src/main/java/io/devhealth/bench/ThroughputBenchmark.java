package io.devhealth.bench;

import io.devhealth.processor.DeviceHealthTopology;
import io.devhealth.processor.ProcessorClients;
import io.devhealth.processor.ProcessorConfig;
import io.devhealth.processor.ProcessorSerdes;
import io.devhealth.processor.StreamProcessorApp;
import io.devhealth.processor.TopologyOptions;
import io.devhealth.schema.Topics;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.schema.serde.SchemaRegistryClient;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.StateRestoreListener;

/**
 * The processor's throughput side by side with Kafka's own limits on this machine, in one run, over
 * the same pre-serialized records: produce, consume, a consume→produce loop, a Kafka Streams
 * pass-through with exactly-once, and the devhealth topology with exactly-once — once for the first
 * contact with every device (allocations and each device's first report: a transition and pod statuses
 * each) and once, resumed from its state, for the steady state that follows (keep-alives, 0.1 % health
 * flips). Ratios between them hold on a noisy machine where absolute figures do not.
 *
 * <pre>java -cp 'benchmarks/target/benchmarks.jar:benchmarks/target/lib/*' io.devhealth.bench.ThroughputBenchmark [records] [devices] [runs]</pre>
 */
public final class ThroughputBenchmark {

    static final String STREAMS_OVERRIDE = "devhealth.bench.streams.";
    static final String PASS_THROUGH = "Streams pass-through (EOS)";
    static final String STEADY = "devhealth steady state (EOS)";
    static final String FLOOR = "stateful floor (EOS)";
    /** {@code -Ddevhealth.bench.cpu.threads=true}: where each Streams stage's CPU went, by thread. */
    private static final boolean BREAKDOWN = Boolean.getBoolean("devhealth.bench.cpu.threads");
    /** Printed with the breakdown: where a stream thread's time goes, and what each fetch brought. */
    private static final Set<String> LOOP_METRICS = Set.of("poll-latency-avg", "poll-rate", "poll-records-avg", "process-latency-avg",
            "process-records-avg", "commit-latency-avg", "commit-rate", "punctuate-latency-avg");
    private static final Set<String> FETCH_METRICS = Set.of("fetch-latency-avg", "fetch-rate", "fetch-size-avg", "records-per-request-avg");
    /**
     * {@code -Ddevhealth.bench.warmup.runs=N}: whole runs done first and not counted. A processor that
     * meets a fleet-wide event has been running for hours with its code compiled; the first run of a
     * fresh JVM measures the JIT as much as the processor (its C2 threads took more CPU per record than
     * the stream thread in the first runs).
     */
    private static final int WARMUP_RUNS = Integer.getInteger("devhealth.bench.warmup.runs", 0);
    /**
     * {@code -Ddevhealth.bench.devices.per.pod=N}: pods of N GPUs (a divisor of 8) instead of one per GPU. With 8, a
     * node's one training pod: a fleet-wide event then changes each pod's status once per GPU, where one pod per GPU
     * changes each status once.
     */
    private static final int DEVICES_PER_POD = Integer.getInteger("devhealth.bench.devices.per.pod", 1);
    /**
     * {@code -Ddevhealth.bench.first.contact.floor=4,12}: after first contact, a {@link FirstContactFloor} stage over
     * the same input for each number of records written per input record: the most a first contact that writes
     * that many could do on this machine.
     */
    private static final List<Integer> FIRST_CONTACT_FLOORS = firstContactFloors(System.getProperty("devhealth.bench.first.contact.floor", ""));
    static final String FIRST_CONTACT = "devhealth first contact (EOS)";
    /** How long the application's own topics must stay unchanged after it caught up: a fleet flush and a commit. */
    private static final Duration READ_BACK_QUIET = TopologyOptions.DEFAULT_FLEET_FLUSH_INTERVAL.plusMillis(500);
    /**
     * A flag the benchmark no longer has: the processor reads only node-events. A run given it fails
     * rather than print figures that look like the ones asked for.
     */
    static final String REMOVED_LEGACY_INPUTS = "devhealth.bench.legacy.inputs";

    /** @param cpu CPU used while timed (process, stream threads); null for stages that are not Streams applications */
    record Result(String stage, long records, long nanos, CpuMeter.Sample cpu) {
        Result(String stage, long records, long nanos) {
            this(stage, records, nanos, null);
        }

        double perSecond() {
            return records * 1e9 / nanos;
        }

        /** Microseconds of stream-thread CPU per record. */
        double streamThreadMicros() {
            return cpu.threadNanos() / 1e3 / records;
        }

        /** Microseconds of CPU of the whole JVM (broker, clients, the application) per record. */
        double processMicros() {
            return cpu.processNanos() / 1e3 / records;
        }
    }

    /** The records-per-input counts of {@code -Ddevhealth.bench.first.contact.floor}, e.g. {@code "4,12"}; none when empty. */
    static List<Integer> firstContactFloors(String setting) {
        if (setting.isBlank()) {
            return List.of();
        }
        List<Integer> counts = new ArrayList<>();
        for (String part : setting.split(",")) {
            int count = Integer.parseInt(part.trim());
            if (count < 1) {
                throw new IllegalArgumentException("-Ddevhealth.bench.first.contact.floor takes record counts of at least 1, got " + count);
            }
            counts.add(count);
        }
        return List.copyOf(counts);
    }

    static String firstContactFloor(int records) {
        return "first-contact floor, " + records + " records (EOS)";
    }

    /** @throws IllegalArgumentException naming a removed flag that {@code properties} set */
    static void rejectRemovedFlags(Properties properties) {
        if (properties.getProperty(REMOVED_LEGACY_INPUTS) != null) {
            throw new IllegalArgumentException("-D" + REMOVED_LEGACY_INPUTS + " is no longer an option: the processor reads only "
                    + "node-events, there is no other input to measure. Drop the flag.");
        }
    }

    public static void main(String[] args) throws Exception {
        rejectRemovedFlags(System.getProperties());
        int records = args.length > 0 ? Integer.parseInt(args[0]) : 400_000;
        int devices = args.length > 1 ? Integer.parseInt(args[1]) : 80_000;
        int runs = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        int partitions = 3;
        System.out.printf(Locale.ROOT, "devhealth throughput: %,d reports over %,d devices (%d per pod), %d partitions, %d runs after %d "
                + "warm-up runs, %d cores, JDK %s%n", records, devices, DEVICES_PER_POD, partitions, runs, WARMUP_RUNS,
                Runtime.getRuntime().availableProcessors(), Runtime.version());
        Map<String, List<Result>> results = new LinkedHashMap<>();
        List<Double> ratios = new ArrayList<>();
        List<Double> cpuRatios = new ArrayList<>();
        List<Double> floorRatios = new ArrayList<>();
        List<Double> overFloorRatios = new ArrayList<>();
        Map<Integer, List<Double>> firstContactShares = new LinkedHashMap<>();
        try (EmbeddedKafkaCluster kafka = EmbeddedKafkaCluster.start()) {
            for (int warmup = 1; warmup <= WARMUP_RUNS; warmup++) {
                for (Result result : runOnce(kafka, -warmup, records, devices, partitions)) {
                    System.out.printf(Locale.ROOT, "  warm-up %d  %-30s %,12.0f rec/s (not counted)%n", warmup, result.stage(), result.perSecond());
                }
            }
            for (int run = 1; run <= runs; run++) {
                Map<String, Double> rates = new LinkedHashMap<>();
                Map<String, Result> byStage = new LinkedHashMap<>();
                for (Result result : runOnce(kafka, run, records, devices, partitions)) {
                    results.computeIfAbsent(result.stage(), s -> new ArrayList<>()).add(result);
                    rates.put(result.stage(), result.perSecond());
                    byStage.put(result.stage(), result);
                    System.out.printf(Locale.ROOT, "  run %d  %-34s %,12.0f rec/s%s%n", run, result.stage(), result.perSecond(),
                            result.cpu() == null ? "" : String.format(Locale.ROOT, "   CPU per record: stream thread %.2f µs, whole JVM %.2f µs",
                                    result.streamThreadMicros(), result.processMicros()));
                }
                ratios.add(rates.get(STEADY) / rates.get(PASS_THROUGH));
                cpuRatios.add(byStage.get(PASS_THROUGH).processMicros() / byStage.get(STEADY).processMicros());
                floorRatios.add(rates.get(FLOOR) / rates.get(PASS_THROUGH));
                overFloorRatios.add(rates.get(STEADY) / rates.get(FLOOR));
                for (int floor : FIRST_CONTACT_FLOORS) {
                    firstContactShares.computeIfAbsent(floor, f -> new ArrayList<>())
                            .add(rates.get(FIRST_CONTACT) / rates.get(firstContactFloor(floor)));
                }
            }
        }
        System.out.println();
        printRatios("steady state ÷ Streams pass-through", ratios);
        // The same comparison in CPU: what a record costs the whole JVM (broker included), which a shared machine moves less.
        printRatios("Streams pass-through CPU per record ÷ steady state CPU per record (whole JVM)", cpuRatios);
        printRatios("stateful floor ÷ Streams pass-through", floorRatios);
        printRatios("steady state ÷ stateful floor", overFloorRatios);
        firstContactShares.forEach((floor, shares) -> printRatios("first contact ÷ " + firstContactFloor(floor), shares));
        System.out.println();
        System.out.println("| stage | median rec/s | vs consume→produce | vs Streams pass-through (EOS) |");
        System.out.println("|---|---:|---:|---:|");
        double loop = median(results.get("consume→produce (at least once)"));
        double streams = median(results.get(PASS_THROUGH));
        results.forEach((stage, list) -> {
            double m = median(list);
            System.out.printf(Locale.ROOT, "| %s | %,.0f | %.2f× | %.2f× |%n", stage, m, m / loop, m / streams);
        });
    }

    private static void printRatios(String what, List<Double> ratios) {
        System.out.printf(Locale.ROOT, "%s, per run: %s; median %.2f×%n", what,
                ratios.stream().map(r -> String.format(Locale.ROOT, "%.2f", r)).toList(), medianOf(ratios));
    }

    /** The median records per second of a stage over the runs. */
    static double median(List<Result> list) {
        return medianOf(list.stream().map(Result::perSecond).toList());
    }

    /** The middle value; of an even count, the mean of the middle two. */
    static double medianOf(List<Double> values) {
        List<Double> sorted = values.stream().sorted(Comparator.naturalOrder()).toList();
        int middle = sorted.size() / 2;
        return sorted.size() % 2 == 1 ? sorted.get(middle) : (sorted.get(middle - 1) + sorted.get(middle)) / 2;
    }

    private static List<Result> runOnce(EmbeddedKafkaCluster kafka, int run, int count, int devices, int partitions) throws Exception {
        Topics topics = new Topics("bench-" + run + ".");
        String passTopic = topics.prefix() + "pass-through";
        kafka.createTopics(partitions, topics.nodeEvents(), topics.healthTransitions(), topics.podVerdicts(), passTopic, passTopic + "-streams");
        kafka.createCompactedTopics(partitions, topics.podDeviceStatus());
        SchemaRegistryClient registry = SchemaRegistries.inMemory("bench-" + run);
        FleetSimulation fleet = new FleetSimulation(devices, 8, DEVICES_PER_POD, 0.001);
        List<ProducerRecord<String, byte[]>> allocations = fleet.allocations(topics, registry);
        // The first round reaches every device for the first time (each a transition and a pod status);
        // what follows is the steady state of a running fleet: keep-alives and a few flips.
        List<ProducerRecord<String, byte[]>> all = fleet.reports(topics, registry, fleet.devices() + count);
        List<ProducerRecord<String, byte[]>> firstContact = all.subList(0, fleet.devices());
        List<ProducerRecord<String, byte[]>> reports = all.subList(fleet.devices(), all.size());

        ProcessorConfig config = processorConfig(kafka, topics, run, "bench-devhealth-" + run);
        Supplier<Topology> topology = () -> DeviceHealthTopology.build(topics, ProcessorSerdes.over(registry),
                TopologyOptions.defaults());
        List<String> inputs = List.of(topics.nodeEvents());
        List<String> readBack = readBack(topics, config.applicationId());

        List<Result> results = new ArrayList<>();
        produce(kafka, allocations);
        produce(kafka, firstContact);
        results.add(runStreams(kafka, FIRST_CONTACT, topology.get(), StreamProcessorApp.streamsProperties(config),
                inputs, readBack, allocations.size() + firstContact.size()));
        // What the stage wrote, so that a run whose inputs the processor dropped (no pods, say) cannot pass for a measurement:
        // every device's first report is a transition, and every pod gets a status.
        long transitions = committedRecords(kafka, topics.healthTransitions());
        long podStatuses = committedRecords(kafka, topics.podDeviceStatus());
        System.out.printf(Locale.ROOT, "  run %d  first contact wrote %,d transitions and %,d pod statuses%n", run, transitions, podStatuses);
        if (transitions < fleet.devices() || podStatuses < fleet.pods()) {
            throw new IllegalStateException(String.format(Locale.ROOT, "run %d: first contact wrote %,d transitions of %,d devices and %,d "
                    + "pod statuses of %,d pods: the processor dropped input, the figures would measure less work than they say", run,
                    transitions, fleet.devices(), podStatuses, fleet.pods()));
        }
        if (BREAKDOWN) {
            printWritten(kafka, run, config.applicationId(), List.of(topics.healthTransitions(), topics.podDeviceStatus(), topics.podVerdicts()),
                    allocations.size() + firstContact.size());
        }
        for (int floor : FIRST_CONTACT_FLOORS) {
            String output = topics.prefix() + "first-contact-floor-" + floor;
            kafka.createTopics(partitions, output);
            results.add(runStreams(kafka, firstContactFloor(floor), FirstContactFloor.topology(topics.nodeEvents(), output, floor),
                    StreamProcessorApp.streamsProperties(processorConfig(kafka, topics, run, "bench-fc-floor-" + floor + "-" + run)),
                    inputs, List.of(), allocations.size() + firstContact.size()));
        }
        results.add(timed("produce (idempotent, acks=all)", reports.size(), () -> produce(kafka, reports)));
        int inTopic = allocations.size() + firstContact.size() + reports.size();
        results.add(timed("consume", inTopic, () -> consume(kafka, topics.nodeEvents(), inTopic)));
        results.add(timed("consume→produce (at least once)", inTopic,
                () -> consumeProduce(kafka, topics.nodeEvents(), passTopic, inTopic)));
        results.add(runStreams(kafka, PASS_THROUGH, passThrough(topics.nodeEvents(), passTopic + "-streams"), "bench-pass-" + run,
                inputs, inTopic));
        // What a stateful task costs before any of our work, with the production Streams settings.
        results.add(runStreams(kafka, FLOOR, StatefulFloor.topology(topics, ProcessorSerdes.over(registry)),
                StreamProcessorApp.streamsProperties(processorConfig(kafka, topics, run, "bench-floor-" + run)),
                inputs, List.of(), inTopic));
        // The same application again, from its committed offsets and kept state: only the steady-state reports are left.
        results.add(runStreams(kafka, STEADY, topology.get(), StreamProcessorApp.streamsProperties(config), inputs, readBack,
                reports.size()));
        return results;
    }

    /**
     * Topics the devhealth topology writes and reads back itself, part of its work: its own transitions
     * (for the fleet counts, through a repartition topic) and its pod statuses (for the pod claims).
     */
    static List<String> readBack(Topics topics, String applicationId) {
        return List.of(topics.healthTransitions(), applicationId + "-fleet-by-dimension-repartition", topics.podDeviceStatus());
    }

    /** Kafka's own reference: every record of {@code from} copied to {@code to} as bytes, nothing decoded. */
    static Topology passThrough(String from, String to) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(from, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
                .to(to, Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
        return builder.build();
    }

    /** The production processor's settings (exactly-once, RocksDB memory bounds) for one Streams stage. */
    private static ProcessorConfig processorConfig(EmbeddedKafkaCluster kafka, Topics topics, int run, String applicationId)
            throws IOException {
        return new ProcessorConfig(processorSettings(kafka, topics, "bench-" + run, applicationId, Files.createTempDirectory("dh-bench")));
    }

    /**
     * The settings of {@link #processorConfig}, as a mutable map for callers that add their own.
     *
     * @param registry the name of the in-memory schema registry the records were serialized with
     */
    static Map<String, Object> processorSettings(EmbeddedKafkaCluster kafka, Topics topics, String registry, String applicationId,
                                                 Path stateDir) {
        Map<String, Object> settings = new HashMap<>();
        settings.put(ProcessorConfig.BOOTSTRAP_SERVERS, kafka.bootstrapServers());
        settings.put(ProcessorConfig.SCHEMA_REGISTRY_URL, "mem://" + registry);
        settings.put(ProcessorConfig.TOPIC_PREFIX, topics.prefix());
        settings.put(ProcessorConfig.APPLICATION_ID, applicationId);
        settings.put(ProcessorConfig.STATE_DIR, stateDir.toString());
        settings.put(ProcessorConfig.COMMIT_INTERVAL, System.getProperty("devhealth.bench.commit.interval.ms", "100"));
        return settings;
    }

    /** {@code -Ddevhealth.bench.streams.<setting>=<value>}: Kafka Streams settings to try on every stage that runs Streams. */
    static Map<String, String> streamsOverrides() {
        Map<String, String> overrides = new LinkedHashMap<>();
        System.getProperties().stringPropertyNames().stream().filter(k -> k.startsWith(STREAMS_OVERRIDE))
                .forEach(k -> overrides.put(k.substring(STREAMS_OVERRIDE.length()), System.getProperty(k)));
        return overrides;
    }

    private interface Stage {
        void run() throws Exception;
    }

    private static Result timed(String name, long records, Stage stage) throws Exception {
        long start = System.nanoTime();
        stage.run();
        return new Result(name, records, System.nanoTime() - start);
    }

    static void produce(EmbeddedKafkaCluster kafka, List<ProducerRecord<String, byte[]>> records) {
        Map<String, Object> props = Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.LINGER_MS_CONFIG, 5,
                ProducerConfig.BATCH_SIZE_CONFIG, 65536,
                ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer())) {
            records.forEach(producer::send);
            producer.flush();
        }
    }

    /**
     * The records first contact wrote through the broker, by topic: its outputs and every topic of the
     * application's own (changelogs, repartitions); what a {@link FirstContactFloor} of the same count would write.
     */
    private static void printWritten(EmbeddedKafkaCluster kafka, int run, String applicationId, List<String> outputs, long inputs)
            throws Exception {
        List<String> written = new ArrayList<>(outputs);
        kafka.admin().listTopics().names().get().stream().filter(t -> t.startsWith(applicationId + "-")).sorted().forEach(written::add);
        long total = 0;
        StringBuilder line = new StringBuilder();
        for (String topic : written) {
            long count = committedRecords(kafka, topic);
            total += count;
            line.append(String.format(Locale.ROOT, " %s=%,d", topic.startsWith(applicationId + "-") ? topic.substring(applicationId.length() + 1) : topic, count));
        }
        System.out.printf(Locale.ROOT, "  run %d  first contact wrote %,d records, %.2f per input record:%s%n", run, total, (double) total / inputs, line);
    }

    /** How many committed records {@code topic} holds (transaction markers and aborted records not counted). */
    static long committedRecords(EmbeddedKafkaCluster kafka, String topic) {
        Map<String, Object> props = new HashMap<>(consumerProps(kafka, "bench-count-" + topic));
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(info -> new TopicPartition(topic, info.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            long count = 0;
            while (partitions.stream().anyMatch(p -> consumer.position(p) < ends.get(p))) {
                count += consumer.poll(Duration.ofMillis(200)).count();
            }
            return count;
        }
    }

    private static Map<String, Object> consumerProps(EmbeddedKafkaCluster kafka, String group) {
        return Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, group,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2000,
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    }

    private static void consume(EmbeddedKafkaCluster kafka, String topic, int expected) {
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(consumerProps(kafka, "bench-consume-" + topic),
                new StringDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            int seen = 0;
            while (seen < expected) {
                seen += consumer.poll(Duration.ofMillis(200)).count();
            }
        }
    }

    private static void consumeProduce(EmbeddedKafkaCluster kafka, String from, String to, int expected) {
        Map<String, Object> producerProps = Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.LINGER_MS_CONFIG, 5,
                ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(consumerProps(kafka, "bench-loop-" + from),
                new StringDeserializer(), new ByteArrayDeserializer());
             KafkaProducer<String, byte[]> producer = new KafkaProducer<>(producerProps, new StringSerializer(), new ByteArraySerializer())) {
            consumer.subscribe(List.of(from));
            int seen = 0;
            while (seen < expected) {
                ConsumerRecords<String, byte[]> batch = consumer.poll(Duration.ofMillis(200));
                batch.forEach(r -> producer.send(new ProducerRecord<>(to, r.key(), r.value())));
                seen += batch.count();
                if (!batch.isEmpty()) {
                    producer.flush();
                    consumer.commitSync();
                }
            }
        }
    }

    static Result runStreams(EmbeddedKafkaCluster kafka, String name, Topology topology, String applicationId,
                             List<String> inputs, long records) throws Exception {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("dh-bench").toString());
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        return runStreams(kafka, name, topology, props, inputs, List.of(), records);
    }

    /**
     * Time from RUNNING to the group's committed offsets reaching the end of every input partition.
     *
     * @param inputs the topics whose records are counted; their end offsets are taken before the start
     * @param readBack topics the application writes and reads itself: the run ends when it has also caught up with
     *                 them (their end offsets as they are at that moment)
     */
    private static Result runStreams(EmbeddedKafkaCluster kafka, String name, Topology topology, Properties props,
                                     List<String> inputs, List<String> readBack, long records) throws Exception {
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.putAll(streamsOverrides());
        String group = props.getProperty(StreamsConfig.APPLICATION_ID_CONFIG);
        Admin admin = kafka.admin();
        Map<TopicPartition, Long> ends = endOffsets(admin, inputs);
        CountDownLatch running = new CountDownLatch(1);
        try (KafkaStreams streams = new KafkaStreams(topology, props, new ProcessorClients())) {
            streams.setStateListener((now, before) -> {
                if (now == KafkaStreams.State.RUNNING) {
                    running.countDown();
                }
            });
            AtomicLong restored = new AtomicLong();
            AtomicLong restoreEnd = new AtomicLong();
            streams.setGlobalStateRestoreListener(new StateRestoreListener() {
                @Override
                public void onRestoreStart(TopicPartition partition, String store, long startingOffset, long endingOffset) {
                }

                @Override
                public void onBatchRestored(TopicPartition partition, String store, long batchEndOffset, long numRestored) {
                    restored.addAndGet(numRestored);
                }

                @Override
                public void onRestoreEnd(TopicPartition partition, String store, long totalRestored) {
                    restoreEnd.set(System.nanoTime());
                }
            });
            streams.start();
            if (!running.await(120, TimeUnit.SECONDS)) {
                throw new IllegalStateException(name + " did not reach RUNNING");
            }
            long start = System.nanoTime();
            Result result = measure(admin, name, group, ends, readBack, records, start, "RUNNING");
            if (BREAKDOWN) {
                printLoop(name, streams);
            }
            if (restored.get() > 0) {
                System.out.printf(Locale.ROOT, "    %s: %,d changelog records restored, last restore ended %+,d ms after RUNNING%n",
                        name, restored.get(), (restoreEnd.get() - start) / 1_000_000);
            }
            return result;
        }
    }

    /**
     * Waits until the running application {@code group} has committed every input record up to
     * {@code ends}, and caught up with its own {@code readBack} topics, and times it from the moment a
     * tenth of the input is committed to the end: what is measured is the rate of processing, not how
     * long opening stores and joining the group took.
     *
     * @param start when the application was let loose on its input ({@code since} names that moment in the output)
     * @return the rate and CPU from a tenth committed, or from {@code start} when the input was too small for that
     */
    static Result measure(Admin admin, String name, String group, Map<TopicPartition, Long> ends, List<String> readBack,
                          long records, long start, String since) throws Exception {
        long total = remaining(admin, group, ends);
        long firstProgress = 0;
        long tenth = 0;
        CpuMeter.Sample cpuAtStart = CpuMeter.sample(group);
        CpuMeter.Sample cpuAtTenth = null;
        Map<String, Long> threadsAtTenth = Map.of();
        long deadline = start + Duration.ofMinutes(10).toNanos();
        for (long left = total; left > 0; left = remaining(admin, group, ends)) {
            long now = System.nanoTime();
            if (firstProgress == 0 && left < total) {
                firstProgress = now;
            }
            if (tenth == 0 && left <= total - total / 10) {
                tenth = now;
                cpuAtTenth = CpuMeter.sample(group);
                threadsAtTenth = BREAKDOWN ? CpuMeter.byThread() : Map.of();
            }
            if (now > deadline) {
                throw new IllegalStateException(name + " did not catch up within 10 minutes");
            }
            Thread.sleep(10);
        }
        long end = System.nanoTime();
        CpuMeter.Sample cpuAtEnd = CpuMeter.sample(group);
        Map<String, Long> threadsAtEnd = BREAKDOWN ? CpuMeter.byThread() : Map.of();
        // The fleet counts are complete when the application has read its own topics to their end and
        // nothing more comes: the fleet combiner sends what it folded once per flush interval, so the
        // end offsets must stay put for a whole interval (plus a commit) after it caught up.
        for (Map<TopicPartition, Long> own = readBack.isEmpty() ? Map.of() : endOffsets(admin, readBack); !own.isEmpty();
                own = endOffsets(admin, readBack)) {
            while (remaining(admin, group, own) > 0) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(name + " did not catch up with its own topics within 10 minutes");
                }
                Thread.sleep(10);
            }
            end = System.nanoTime();
            cpuAtEnd = CpuMeter.sample(group);
            threadsAtEnd = BREAKDOWN ? CpuMeter.byThread() : Map.of();
            Thread.sleep(READ_BACK_QUIET.toMillis());
            if (endOffsets(admin, readBack).equals(own)) {
                break;
            }
        }
        if (BREAKDOWN && cpuAtTenth != null) {
            printBreakdown(name, threadsAtTenth, threadsAtEnd, records - records / 10);
        }
        Result result = tenth == 0 || end - tenth < 50_000_000L
                ? new Result(name, records, end - start, cpuAtEnd.minus(cpuAtStart))
                : new Result(name, records - records / 10, end - tenth, cpuAtEnd.minus(cpuAtTenth));
        System.out.printf(Locale.ROOT, "    %s: first input committed %,d ms after %s; whole run from %s %,.0f rec/s%n",
                name, ((firstProgress == 0 ? end : firstProgress) - start) / 1_000_000, since, since, records * 1e9 / (end - start));
        return result;
    }

    /**
     * The loop's own averages: Kafka Streams' per-thread phases and the main consumer's fetches. They are
     * the metrics' recent window, which takes in the idle polls after the stage caught up: where the time
     * went while it processed, Kafka Streams' {@code StreamThread} log at TRACE tells (PERFORMANCE.md, section 2).
     */
    private static void printLoop(String stage, KafkaStreams streams) {
        Map<String, Double> values = new TreeMap<>();
        streams.metrics().forEach((metric, value) -> {
            String group = metric.group();
            boolean thread = group.equals("stream-thread-metrics") && LOOP_METRICS.contains(metric.name());
            boolean fetch = group.equals("consumer-fetch-manager-metrics") && !metric.tags().containsKey("topic")
                    && metric.tags().getOrDefault("client-id", "").endsWith("StreamThread-1-consumer") && FETCH_METRICS.contains(metric.name());
            if ((thread || fetch) && value.metricValue() instanceof Double number && !number.isNaN()) {
                values.put(metric.name(), number);
            }
        });
        System.out.printf(Locale.ROOT, "    %s: loop %s%n", stage, values.entrySet().stream()
                .map(e -> String.format(Locale.ROOT, "%s=%.2f", e.getKey(), e.getValue())).collect(Collectors.joining(" ")));
    }

    private static void printBreakdown(String stage, Map<String, Long> before, Map<String, Long> after, long records) {
        System.out.printf(Locale.ROOT, "    %s: CPU per record by thread (µs):%n", stage);
        after.entrySet().stream()
                .map(e -> Map.entry(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0L)))
                .filter(e -> e.getValue() > 0)
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .limit(12)
                .forEach(e -> System.out.printf(Locale.ROOT, "      %8.2f  %s%n", e.getValue() / 1e3 / records, e.getKey()));
    }

    static Map<TopicPartition, Long> endOffsets(Admin admin, List<String> topics) throws Exception {
        Map<TopicPartition, Long> ends = new LinkedHashMap<>();
        for (String topic : topics) {
            int count = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size();
            for (int p = 0; p < count; p++) {
                TopicPartition tp = new TopicPartition(topic, p);
                ends.put(tp, admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get().offset());
            }
        }
        return ends;
    }

    /** Input records not yet committed by {@code group}: (end − committed) over every input partition. */
    private static long remaining(Admin admin, String group, Map<TopicPartition, Long> ends) {
        try {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get();
            // Under exactly-once the last committed offset sits one past the transaction marker.
            return ends.entrySet().stream().mapToLong(e -> {
                OffsetAndMetadata at = committed.get(e.getKey());
                return Math.max(0L, e.getValue() - (at == null ? 0L : at.offset()));
            }).sum();
        } catch (Exception e) {
            return Long.MAX_VALUE;
        }
    }
}
