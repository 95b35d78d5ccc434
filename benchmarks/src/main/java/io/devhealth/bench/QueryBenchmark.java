package io.devhealth.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.devhealth.bench.pipeline.Percentiles;
import io.devhealth.bench.pipeline.ProcessStats;
import io.devhealth.processor.DeviceHealthTopology;
import io.devhealth.processor.ProcessorConfig;
import io.devhealth.processor.RestoreProgress;
import io.devhealth.query.QueryConfig;
import io.devhealth.query.QueryableProcessor;
import io.devhealth.query.access.QuerySecurityConfig;
import io.devhealth.runtime.config.ServiceConfig;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.ClaimAllocation;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.ContainerAllocation;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.schema.serde.SchemaRegistryClient;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyWindowStore;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Query latency of the real HTTP query API over a processor that holds a large history.
 *
 * <p>Prefill: a fleet of {@code --devices} devices on nodes of {@code --devices-per-node}, one pod per
 * device (node allocations), and device reports that flip every device Healthy ↔ Unhealthy, with
 * {@code observedAt} spread evenly over the last {@code --days}; every report is a CHANGE, so each one
 * is one health transition and one pod status change. The reports go through the production topology
 * ({@link QueryableProcessor}: exactly-once, RocksDB) on the in-process broker; the benchmark waits
 * until the processor's committed offsets reach the end of every input (and of the topics it reads
 * back), then counts what the history stores actually hold.
 *
 * <p>Then a mix of requests from 1..n client threads (JDK HttpClient): device history (first page,
 * next pages via the {@code continue} token, a one-day window ending at a past time T), a pod's devices
 * as of T and latest, a node's devices and the fleet summary. Every non-200 answer is an error.
 *
 * <pre>java -Xmx3g -cp 'benchmarks/target/benchmarks.jar:benchmarks/target/lib/*' io.devhealth.bench.QueryBenchmark --help</pre>
 */
@Command(name = "query-benchmark", mixinStandardHelpOptions = true,
        description = "Query API latency over a processor holding many stored transitions.")
public final class QueryBenchmark implements Callable<Integer> {

    private static final ObjectMapper JSON = JsonMapper.builder().build();
    private static final String DRIVER = "gpu.bench.example";
    private static final String NAMESPACE = "bench";

    @Option(names = "--transitions", description = "Transitions to store (rounded up to whole rounds over the fleet); default ${DEFAULT-VALUE}.")
    long transitions = 1_000_000;

    @Option(names = "--devices", description = "Devices in the fleet; default ${DEFAULT-VALUE}.")
    int devices = 10_000;

    @Option(names = "--devices-per-node", description = "Devices (and pods) per node; default ${DEFAULT-VALUE}.")
    int devicesPerNode = 8;

    @Option(names = "--days", description = "observedAt spread over the last this many days; default ${DEFAULT-VALUE}.")
    int days = 7;

    @Option(names = "--partitions", description = "Partitions of the input topics; default ${DEFAULT-VALUE}.")
    int partitions = 3;

    @Option(names = "--requests", description = "Timed requests per client-thread setting; default ${DEFAULT-VALUE}.")
    int requests = 20_000;

    @Option(names = "--warmup", description = "Untimed requests before each timed run; default ${DEFAULT-VALUE}.")
    int warmup = 3_000;

    @Option(names = "--threads", split = ",", description = "Client thread counts, one timed run each; default ${DEFAULT-VALUE}.")
    List<Integer> threads = List.of(1, 4);

    @Option(names = "--page-size", description = "limit= of device history pages; default ${DEFAULT-VALUE}.")
    int pageSize = 20;

    @Option(names = "--work-dir", description = "State and broker directory (default: a temporary one, deleted at the end).")
    Path workDir;

    @Option(names = "--processing-guarantee", description = "The processor's processing.guarantee; default ${DEFAULT-VALUE}.")
    String processingGuarantee = "exactly_once_v2";

    @Option(names = "--restore", description = "After the queries, measure restores from the changelogs: a new instance on an empty "
            + "state directory, then a takeover of one of two instances' tasks without and with a standby.")
    boolean restore;

    private int nodes;
    private Instant base;
    private Instant end;
    private long spacingMs;
    /** Timed requests answered with an error, over every client-thread setting. */
    private long failedRequests;

    public static void main(String[] args) {
        System.exit(new CommandLine(new QueryBenchmark()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        nodes = Math.max(1, devices / devicesPerNode);
        devices = nodes * devicesPerNode;
        int rounds = (int) Math.max(1, (transitions + devices - 1) / devices);
        end = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        base = end.minus(Duration.ofDays(days));
        spacingMs = Duration.ofDays(days).toMillis() / rounds;
        System.out.printf(Locale.ROOT, "devhealth query benchmark: %,d devices on %,d nodes, %d flips per device (%,d reports), observedAt over %d days "
                        + "(one flip per device every %.1f min), %d partitions, %d cores, JDK %s, load %s%n",
                devices, nodes, rounds, (long) rounds * devices, days, spacingMs / 60_000.0, partitions,
                Runtime.getRuntime().availableProcessors(), Runtime.version(), ProcessStats.loadAverage());
        boolean temporary = workDir == null;
        Path dir = temporary ? Files.createTempDirectory("devhealth-query-bench-") : Files.createDirectories(workDir);
        Topics topics = new Topics("qbench.");
        String registryName = "qbench-" + System.nanoTime();
        SchemaRegistryClient registry = SchemaRegistries.inMemory(registryName);
        try (EmbeddedKafkaCluster kafka = EmbeddedKafkaCluster.start()) {
            // The reports are days old by design: no time-based deletion may remove them while they wait.
            Map<String, String> keepAll = Map.of("retention.ms", "-1");
            kafka.createTopics(partitions, keepAll, topics.nodeEvents(), topics.healthTransitions(), topics.podVerdicts(), topics.fleetStats(), topics.deadLetters());
            kafka.createCompactedTopics(partitions, topics.podDeviceStatus());

            long t0 = System.nanoTime();
            produce(kafka, topics, registry, rounds);
            phase("produced " + String.format(Locale.ROOT, "%,d", (long) rounds * devices + nodes) + " records", t0);

            Path stateDir = dir.resolve("state");
            String applicationId = "devhealth-query-bench";
            Map<String, Object> settings = new HashMap<>();
            settings.put(ProcessorConfig.TOPIC_PREFIX, topics.prefix());
            settings.put(ProcessorConfig.SCHEMA_REGISTRY_URL, "mem://" + registryName);
            settings.put(ProcessorConfig.APPLICATION_ID, applicationId);
            settings.put(ProcessorConfig.PROCESSING_GUARANTEE, processingGuarantee);
            settings.put(ProcessorConfig.STATE_DIR, stateDir.toString());
            settings.put(QueryConfig.BIND_ADDRESS, "127.0.0.1");
            settings.put(QueryConfig.PORT, "0");
            settings.put(QueryConfig.ADVERTISED_HOST, "127.0.0.1");
            // Measures the server, not authentication: on loopback, without credentials.
            settings.put(QuerySecurityConfig.INSECURE, "true");
            kafka.clientProperties().forEach((key, value) -> settings.put(ServiceConfig.KAFKA_PREFIX + key, String.valueOf(value)));
            try (QueryableProcessor processor = QueryableProcessor.of(settings)) {
                long t1 = System.nanoTime();
                processor.start();
                awaitCaughtUp(kafka.admin(), applicationId, List.of(topics.nodeEvents()), t1, (long) rounds * devices + nodes);
                // Fleet counts are computed from health-transitions read back, through a repartition topic.
                awaitCaughtUp(kafka.admin(), applicationId, List.of(topics.healthTransitions()), t1, 0);
                List<String> repartition = kafka.admin().listTopics().names().get().stream()
                        .filter(t -> t.startsWith(applicationId + "-") && t.endsWith("-repartition")).toList();
                awaitCaughtUp(kafka.admin(), applicationId, repartition, t1, 0);
                phase("processor caught up (committed = end offsets)", t1);

                Map<String, Long> stored = countStored(processor.streams());
                stored.forEach((store, count) -> System.out.printf(Locale.ROOT, "  stored %-16s %,12d entries%n", store, count));
                Map<String, Long> onDisk = storeSizes(stateDir);
                onDisk.forEach((store, bytes) -> System.out.printf(Locale.ROOT, "  on disk %-15s %,12.1f MiB%n", store, bytes / 1048576.0));

                URI api = URI.create("http://127.0.0.1:" + processor.queryAddress().port());
                List<String> tables = new ArrayList<>();
                for (int threadCount : requests == 0 ? List.<Integer>of() : threads) {
                    tables.add(runQueries(api, threadCount));
                }

                System.out.println();
                System.out.printf(Locale.ROOT, "stored transitions (device-history): %,d; pod statuses (pod-history): %,d%n",
                        stored.get(DeviceHealthTopology.DEVICE_HISTORY_STORE), stored.get(DeviceHealthTopology.POD_HISTORY_STORE));
                // Every report flips its device, so each is a stored transition: fewer and the latencies are of a smaller store.
                long expected = (long) rounds * devices;
                if (stored.get(DeviceHealthTopology.DEVICE_HISTORY_STORE) < expected) {
                    throw new IllegalStateException(String.format(Locale.ROOT, "device-history holds %,d transitions of the %,d reported",
                            stored.get(DeviceHealthTopology.DEVICE_HISTORY_STORE), expected));
                }
                System.out.printf(Locale.ROOT, "state on disk: %s; JVM (broker + processor + clients in one process): heap live after GC %.0f MiB, "
                                + "RSS %.0f MiB; load %s%n",
                        onDisk.entrySet().stream().map(e -> String.format(Locale.ROOT, "%s %.1f MiB", e.getKey(), e.getValue() / 1048576.0))
                                .reduce((a, b) -> a + ", " + b).orElse("none"),
                        ProcessStats.heapAfterGc() / 1048576.0, ProcessStats.rssBytes() / 1048576.0, ProcessStats.loadAverage());
                System.out.println();
                System.out.println("| client threads | endpoint | requests | p50 ms | p99 ms | p99.9 ms | max ms | errors |");
                System.out.println("|---:|---|---:|---:|---:|---:|---:|---:|");
                tables.forEach(System.out::print);
                if (failedRequests > 0) {
                    throw new IllegalStateException(String.format(Locale.ROOT, "%,d queries failed (ERROR lines above): the latencies "
                            + "above include answers that were errors", failedRequests));
                }
            }
            if (restore) {
                new Restores(settings, dir).measure();
            }
        } finally {
            if (temporary) {
                ProcessStats.deleteRecursively(dir);
            }
        }
        return 0;
    }

    // ---------------------------------------------------------------- restores

    /**
     * Restores from the changelogs the first instance wrote (it has closed, leaving the group): what an
     * operator waits for when a processor's state directory is lost, or an instance's tasks move to
     * another one. Each phase's instances have empty state directories of their own.
     */
    private record Restores(Map<String, Object> settings, Path dir) {

        void measure() throws Exception {
            System.out.println();
            System.out.println("| restore | instances | records restored | store partitions | ready after s | restore time s (sum) | records/s |");
            System.out.println("|---|---:|---:|---:|---:|---:|---:|");
            try (QueryableProcessor alone = start("alone", 0)) {
                long t0 = System.nanoTime();
                ProcessorInstances.awaitReady(List.of(alone));
                row("everything, onto an empty state directory", 1, alone, t0, 0);
            }
            for (int standbys : new int[] {0, 1}) {
                try (QueryableProcessor leaving = start("leaving-" + standbys, standbys);
                     QueryableProcessor staying = start("staying-" + standbys, standbys)) {
                    ProcessorInstances.awaitReady(List.of(leaving, staying));
                    if (standbys > 0) {
                        // Kafka Streams' own lag of every local store copy, active and standby, against its changelog's end.
                        ProcessorInstances.awaitUntil("standbys caught up", () -> caughtUp(staying) && caughtUp(leaving));
                    }
                    int tasks = ProcessorInstances.activeTasks(leaving) + ProcessorInstances.activeTasks(staying);
                    double before = counter(staying, RestoreProgress.RESTORED);
                    double partitionsBefore = staying.meters().get(RestoreProgress.RESTORE_TIME).timer().count();
                    long t0 = System.nanoTime();
                    leaving.close();
                    ProcessorInstances.awaitReady(List.of(staying), tasks);
                    row("one instance's tasks taken over, " + (standbys == 0 ? "no standby" : "from a standby"), 2, staying, t0,
                            before, partitionsBefore);
                }
            }
        }

        private QueryableProcessor start(String name, int standbys) throws Exception {
            Map<String, Object> own = new HashMap<>(settings);
            own.put(ProcessorConfig.STATE_DIR, Files.createDirectories(dir.resolve("restore-" + name)).toString());
            own.put(ServiceConfig.KAFKA_PREFIX + StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, Integer.toString(standbys));
            QueryableProcessor app = QueryableProcessor.of(own);
            app.start();
            return app;
        }

        private static boolean caughtUp(QueryableProcessor app) {
            return app.streams().allLocalStorePartitionLags().values().stream()
                    .flatMap(byPartition -> byPartition.values().stream())
                    // Under exactly-once a changelog ends with a transaction marker, which no store copy reads.
                    .allMatch(lag -> lag.offsetLag() <= 1);
        }

        private static double counter(QueryableProcessor app, String name) {
            return app.meters().get(name).counter().count();
        }

        private static void row(String what, int instances, QueryableProcessor app, long startNanos, double restoredBefore) {
            row(what, instances, app, startNanos, restoredBefore, 0);
        }

        private static void row(String what, int instances, QueryableProcessor app, long startNanos, double restoredBefore,
                double partitionsBefore) {
            double ready = (System.nanoTime() - startNanos) / 1e9;
            double records = counter(app, RestoreProgress.RESTORED) - restoredBefore;
            io.micrometer.core.instrument.Timer timer = app.meters().get(RestoreProgress.RESTORE_TIME).timer();
            double partitions = timer.count() - partitionsBefore;
            double restoreSeconds = timer.totalTime(java.util.concurrent.TimeUnit.SECONDS);
            System.out.printf(Locale.ROOT, "| %s | %d | %,.0f | %,.0f | %.1f | %.1f | %,.0f |%n", what, instances, records, partitions, ready,
                    restoreSeconds, ready > 0 ? records / ready : 0);
        }
    }

    // ---------------------------------------------------------------- prefill

    private static String node(int n) {
        return "node-" + n;
    }

    private static String pod(int n, int d) {
        return "job-" + n + "-" + d;
    }

    private void produce(EmbeddedKafkaCluster kafka, Topics topics, SchemaRegistryClient registry, int rounds) throws Exception {
        Map<String, Object> props = Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.LINGER_MS_CONFIG, 20,
                ProducerConfig.BATCH_SIZE_CONFIG, 262_144,
                ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        Serializer<NodeEvent> events = AvroSerde.of(NodeEvent.class, registry).serializer();
        AtomicReference<Exception> failure = new AtomicReference<>();
        long[] sequence = new long[nodes];
        // A timeout comfortably above the gap between one device's reports: the devices are not silent, only slow to flip.
        long timeoutSeconds = Math.max(30, 2 * spacingMs / 1000);
        long started = System.nanoTime();
        long lastPrint = started;
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer())) {
            long allocatedAt = base.minusSeconds(60).toEpochMilli();
            for (int n = 0; n < nodes; n++) {
                List<PodAllocation> pods = new ArrayList<>(devicesPerNode);
                for (int d = 0; d < devicesPerNode; d++) {
                    ClaimDevice device = ClaimDevice.newBuilder().setDriver(DRIVER).setPool(node(n)).setDevice("gpu-" + d)
                            .setCdiIds(List.of(DRIVER + "/gpu=gpu-" + d)).build();
                    pods.add(new PodAllocation(NAMESPACE, pod(n, d), List.of(ContainerAllocation.newBuilder().setName("main")
                            .setClaims(List.of(new ClaimAllocation(pod(n, d) + "-gpu", NAMESPACE, List.of(device)))).build())));
                }
                // Epoch and sequence as a collector sets them: a snapshot at (0, 0) is not after the node's initial watermark.
                NodeAllocations value = NodeAllocations.newBuilder().setNode(node(n)).setObservedAt(Instant.ofEpochMilli(allocatedAt))
                        .setCollectorEpoch(1).setSequence(1).setPods(pods).build();
                producer.send(new ProducerRecord<>(topics.nodeEvents(), null, allocatedAt, node(n),
                        events.serialize(topics.nodeEvents(), new NodeEvent(value))), (m, e) -> failure.compareAndSet(null, e));
            }
            long sent = 0;
            for (int round = 0; round < rounds; round++) {
                boolean unhealthy = round % 2 == 1;
                for (int i = 0; i < devices; i++) {
                    int n = i / devicesPerNode;
                    int d = i % devicesPerNode;
                    // Spread evenly inside the round, increasing per node: the node's own clock moves forward.
                    long observedAt = base.toEpochMilli() + round * spacingMs + (long) i * spacingMs / devices;
                    DeviceHealthReport report = DeviceHealthReport.newBuilder()
                            .setNode(node(n)).setSource(SourceKind.DRA).setSourceName(DRIVER)
                            .setDevice(DeviceRef.newBuilder().setDriver(DRIVER).setPool(node(n)).setDevice("gpu-" + d).build())
                            .setHealth(unhealthy ? HealthStatus.UNHEALTHY : HealthStatus.HEALTHY)
                            .setMessage(unhealthy ? "XID 79: GPU has fallen off the bus" : null)
                            .setReason(unhealthy ? "XID-79" : null)
                            .setKind(ReportKind.CHANGE)
                            .setObservedAt(Instant.ofEpochMilli(observedAt))
                            .setTimeoutSeconds(timeoutSeconds)
                            .setCollectorEpoch(1)
                            .setSequence(++sequence[n])
                            .build();
                    // The collector stamps records with the time it accepted the report (≈ observedAt).
                    producer.send(new ProducerRecord<>(topics.nodeEvents(), null, observedAt, node(n),
                            events.serialize(topics.nodeEvents(), new NodeEvent(report))), (m, e) -> failure.compareAndSet(null, e));
                    sent++;
                }
                if (failure.get() != null) {
                    throw failure.get();
                }
                long now = System.nanoTime();
                if (now - lastPrint > 10_000_000_000L) {
                    lastPrint = now;
                    System.out.printf(Locale.ROOT, "  producing: %,d reports, %,.0f/s, load %s%n", sent, sent * 1e9 / (now - started),
                            ProcessStats.loadAverage());
                }
            }
            producer.flush();
        }
        if (failure.get() != null) {
            throw failure.get();
        }
    }

    /** Waits until the group's committed offsets reach the end offsets of {@code topics} (as they are now), printing progress. */
    private static void awaitCaughtUp(Admin admin, String group, List<String> topics, long startNanos, long total) throws Exception {
        Map<TopicPartition, Long> ends = new LinkedHashMap<>();
        for (String topic : topics) {
            int count = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size();
            for (int p = 0; p < count; p++) {
                TopicPartition tp = new TopicPartition(topic, p);
                ends.put(tp, admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get().offset());
            }
        }
        long lastPrint = System.nanoTime();
        long deadline = System.nanoTime() + Duration.ofMinutes(60).toNanos();
        while (true) {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            long behind = 0;
            long done = 0;
            for (Map.Entry<TopicPartition, Long> e : ends.entrySet()) {
                OffsetAndMetadata offset = committed.get(e.getKey());
                long at = offset == null ? 0 : offset.offset();
                // Under exactly-once the last committed offset sits one past the transaction marker.
                behind += Math.max(0, e.getValue() - at);
                done += Math.min(at, e.getValue());
            }
            if (behind == 0) {
                return;
            }
            long now = System.nanoTime();
            if (now > deadline) {
                throw new IllegalStateException("processor did not catch up on " + topics + " within 60 minutes; " + behind + " behind");
            }
            if (total > 0 && now - lastPrint > 15_000_000_000L) {
                lastPrint = now;
                double seconds = (now - startNanos) / 1e9;
                System.out.printf(Locale.ROOT, "  processing: %,d of ~%,d committed (%.0f%%), %,.0f records/s, %.0f s, load %s%n",
                        done, total, 100.0 * done / total, done / seconds, seconds, ProcessStats.loadAverage());
            }
            Thread.sleep(200);
        }
    }

    /** Entries the processor's history stores actually hold, read through interactive queries (nothing assumed). */
    private static Map<String, Long> countStored(KafkaStreams streams) {
        Map<String, Long> counts = new LinkedHashMap<>();
        for (String name : List.of(DeviceHealthTopology.DEVICE_HISTORY_STORE, DeviceHealthTopology.POD_HISTORY_STORE)) {
            ReadOnlyWindowStore<String, Object> store = streams.store(StoreQueryParameters.fromNameAndType(name,
                    QueryableStoreTypes.windowStore()));
            long count = 0;
            try (KeyValueIterator<Windowed<String>, Object> all = store.all()) {
                while (all.hasNext()) {
                    all.next();
                    count++;
                }
            }
            counts.put(name, count);
        }
        return counts;
    }

    /** Bytes on disk per store (summed over tasks), plus the whole state directory. */
    private static Map<String, Long> storeSizes(Path stateDir) throws Exception {
        Map<String, Long> sizes = new TreeMap<>();
        try (Stream<Path> paths = Files.walk(stateDir)) {
            // Key-value stores live in <task>/rocksdb/<store>, segmented (window) stores in <task>/<store>/<segment>.
            for (Path path : paths.filter(p -> Files.isDirectory(p) && p.getParent() != null && p.getParent().getFileName() != null
                    && !p.getFileName().toString().equals("rocksdb")
                    && (p.getParent().getFileName().toString().equals("rocksdb")
                        || p.getParent().getFileName().toString().matches("\\d+_\\d+"))).toList()) {
                sizes.merge(path.getFileName().toString(), ProcessStats.directoryBytes(path), Long::sum);
            }
        }
        sizes.put("(state dir total)", ProcessStats.directoryBytes(stateDir));
        return sizes;
    }

    // ---------------------------------------------------------------- queries

    enum Endpoint {
        HISTORY_FIRST_PAGE("device history, first page", 25),
        HISTORY_NEXT_PAGE("device history, next page (continue)", 15),
        HISTORY_AS_OF("device history, 24 h up to T", 20),
        POD_AT("pod devices as of T", 20),
        POD_LATEST("pod devices, latest", 10),
        NODE_DEVICES("node devices", 5),
        FLEET_SUMMARY("fleet summary (1 h)", 5);

        final String label;
        final int weight;

        Endpoint(String label, int weight) {
            this.label = label;
            this.weight = weight;
        }

        static Endpoint pick(Random random) {
            int roll = random.nextInt(100);
            for (Endpoint endpoint : values()) {
                roll -= endpoint.weight;
                if (roll < 0) {
                    return endpoint;
                }
            }
            return FLEET_SUMMARY;
        }
    }

    record Sample(Endpoint endpoint, double millis, int status) {}

    private String runQueries(URI api, int threadCount) throws Exception {
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
        System.out.printf(Locale.ROOT, "%n  %d client thread(s): %,d warm-up + %,d timed requests, load before %s%n", threadCount, warmup,
                requests, ProcessStats.loadAverage());
        run(client, api, threadCount, warmup, 1000);
        long started = System.nanoTime();
        List<Sample> samples = run(client, api, threadCount, requests, 2000);
        double seconds = (System.nanoTime() - started) / 1e9;
        Map<Endpoint, List<Sample>> byEndpoint = new LinkedHashMap<>();
        for (Endpoint endpoint : Endpoint.values()) {
            byEndpoint.put(endpoint, new ArrayList<>());
        }
        samples.forEach(s -> byEndpoint.get(s.endpoint()).add(s));
        StringBuilder table = new StringBuilder();
        byEndpoint.forEach((endpoint, list) -> table.append(row(threadCount, endpoint.label, list)));
        table.append(row(threadCount, "**all**", samples));
        long errors = samples.stream().filter(s -> s.status() != 200).count();
        failedRequests += errors;
        System.out.printf(Locale.ROOT, "  %d thread(s): %,.0f requests/s, %,d errors, load after %s%n", threadCount, samples.size() / seconds,
                errors, ProcessStats.loadAverage());
        System.out.print(table);
        return table.toString();
    }

    private static String row(int threadCount, String label, List<Sample> list) {
        Percentiles p = new Percentiles(list.stream().mapToDouble(Sample::millis).toArray());
        long errors = list.stream().filter(s -> s.status() != 200).count();
        return String.format(Locale.ROOT, "| %d | %s | %,d | %.2f | %.2f | %.2f | %.2f | %d |%n", threadCount, label, p.count(), p.at(50), p.at(99),
                p.at(99.9), p.max(), errors);
    }

    private List<Sample> run(HttpClient client, URI api, int threadCount, int total, long seed) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threadCount);
        try {
            List<Future<List<Sample>>> futures = new ArrayList<>();
            for (int t = 0; t < threadCount; t++) {
                int share = total / threadCount + (t < total % threadCount ? 1 : 0);
                long threadSeed = seed * 31 + t;
                futures.add(pool.submit(() -> client(client, api, share, new Random(threadSeed))));
            }
            List<Sample> all = new ArrayList<>(total);
            for (Future<List<Sample>> future : futures) {
                all.addAll(future.get());
            }
            return all;
        } finally {
            pool.shutdownNow();
        }
    }

    /** One client thread: its own sequence of requests; a next-page request follows the token of its last history page. */
    private List<Sample> client(HttpClient client, URI api, int count, Random random) throws Exception {
        List<Sample> samples = new ArrayList<>(count);
        String pendingPage = null;
        for (int i = 0; i < count; i++) {
            Endpoint endpoint = Endpoint.pick(random);
            if (endpoint == Endpoint.HISTORY_NEXT_PAGE && pendingPage == null) {
                endpoint = Endpoint.HISTORY_FIRST_PAGE;
            }
            int device = random.nextInt(devices);
            int n = device / devicesPerNode;
            int d = device % devicesPerNode;
            String history = "/v1/devices/" + node(n) + "/" + DRIVER + "/" + node(n) + "/gpu-" + d + "/history";
            Instant at = base.plusMillis((long) (random.nextDouble() * (end.toEpochMilli() - base.toEpochMilli())));
            // A pod's devices are asked for as of a moment the pod had a status: before its device's first report the answer
            // is a correct 404, which is neither a latency of the store nor an error of the server.
            Instant firstReport = base.plusMillis((long) device * spacingMs / devices);
            Instant podAt = firstReport.plusMillis((long) (random.nextDouble() * (end.toEpochMilli() - firstReport.toEpochMilli())));
            String path = switch (endpoint) {
                case HISTORY_FIRST_PAGE -> history + "?limit=" + pageSize;
                case HISTORY_NEXT_PAGE -> pendingPage;
                case HISTORY_AS_OF -> history + "?from=" + at.minus(Duration.ofDays(1)) + "&to=" + at + "&limit=100";
                case POD_AT -> "/v1/pods/" + NAMESPACE + "/" + pod(n, d) + "/devices?at=" + podAt;
                case POD_LATEST -> "/v1/pods/" + NAMESPACE + "/" + pod(n, d) + "/devices";
                case NODE_DEVICES -> "/v1/nodes/" + node(n) + "/devices";
                case FLEET_SUMMARY -> "/v1/fleet/summary?window=1h";
            };
            HttpRequest request = HttpRequest.newBuilder(api.resolve(path)).timeout(Duration.ofSeconds(30)).GET().build();
            long start = System.nanoTime();
            HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
            double millis = (System.nanoTime() - start) / 1e6;
            samples.add(new Sample(endpoint, millis, response.statusCode()));
            if (response.statusCode() != 200) {
                System.out.printf(Locale.ROOT, "  ERROR %d %s: %s%n", response.statusCode(), path,
                        response.body().length() > 300 ? response.body().substring(0, 300) : response.body());
                if (endpoint == Endpoint.HISTORY_NEXT_PAGE) {
                    pendingPage = null;
                }
                continue;
            }
            if (endpoint == Endpoint.HISTORY_FIRST_PAGE || endpoint == Endpoint.HISTORY_NEXT_PAGE) {
                JsonNode body = JSON.readTree(response.body());
                JsonNode token = body.get("continue");
                pendingPage = token == null || token.isNull() ? null
                        : history(body) + "?limit=" + pageSize + "&continue=" + URLEncoder.encode(token.asText(), StandardCharsets.UTF_8);
            }
        }
        return samples;
    }

    private static String history(JsonNode page) {
        return "/v1/devices/" + page.get("node").asText() + "/" + page.get("driver").asText() + "/" + page.get("pool").asText() + "/"
                + page.get("device").asText() + "/history";
    }

    private static void phase(String what, long startNanos) {
        System.out.printf(Locale.ROOT, "  %-50s %7.1f s  load %s%n", what, (System.nanoTime() - startNanos) / 1e9, ProcessStats.loadAverage());
    }
}
