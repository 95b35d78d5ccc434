package io.devhealth.bench;

import io.devhealth.bench.pipeline.ApiServerObserver;
import io.devhealth.bench.pipeline.ConditionWriteCeiling;
import io.devhealth.bench.pipeline.Percentiles;
import io.devhealth.bench.pipeline.ProcessStats;
import io.devhealth.bench.pipeline.QueryAgreement;
import io.devhealth.bench.pipeline.RealControlPlane;
import io.devhealth.bench.pipeline.SimulatedFleet;
import io.devhealth.bench.pipeline.SinkOutcomes;
import io.devhealth.processor.ProcessorConfig;
import io.devhealth.processor.internals.rules.DeviceHealthMerger;
import io.devhealth.query.QueryConfig;
import io.devhealth.query.QueryableProcessor;
import io.devhealth.query.access.QuerySecurityConfig;
import io.devhealth.runtime.config.ServiceConfig;
import io.devhealth.schema.Topics;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.simulators.kube.FleetKubernetesApi;
import io.devhealth.simulators.kube.PodFixtures;
import io.devhealth.sink.SinkApp;
import io.devhealth.sink.SinkConfig;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.Counter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The whole pipeline in one JVM under a simulated fleet, measured end to end: collector publishing
 * path (SnapshotDiff → RocksDB disk spool → sender → idempotent producer), in-process Kafka broker,
 * the stream processor with exactly-once, and the sink writing pod status into an API server, observed
 * from the server's side: the in-process {@code FleetKubernetesApi} ({@code --api-server fleet}, the
 * default: devhealth's own cost) or a real etcd and kube-apiserver built by {@code scripts/kube}
 * ({@code --api-server real}: the shipped RBAC, admission policies and priority level, the sink as its
 * ServiceAccount). Phases: create the pods; initial snapshot of every device until every pod shows its
 * condition; a quiet window of keep-alives only (the sink must write nothing); a window with device
 * health flapping (end-to-end latency); an optional storm; optional incidents, each followed by the
 * recovery of every device (drain time: the last pod showing it); then a few nodes go silent (lateness
 * of Unknown after the deadline); on the real API server, optionally, its own rate for the sink's write
 * (the ceiling). See docs/PERFORMANCE.md.
 *
 * <p>A phase that does not complete (a pod that never shows its condition, a change never shown)
 * fails the run with what was missing and what the sink did with its statuses: a benchmark that
 * prints figures for work that did not happen is worse than one that prints none.
 *
 * <pre>java -Xmx3g -cp 'benchmarks/target/benchmarks.jar:benchmarks/target/lib/*' io.devhealth.bench.PipelineBenchmark --nodes 1250 --devices 8</pre>
 */
@Command(name = "pipeline-benchmark", mixinStandardHelpOptions = true,
        description = "Whole-pipeline benchmark: simulated fleet → collector path → Kafka → processor (EOS) → sink → in-process API server.")
public final class PipelineBenchmark implements Callable<Integer> {

    @Option(names = "--nodes", description = "Simulated nodes (default ${DEFAULT-VALUE}).")
    int nodes = 1250;

    @Option(names = "--devices", description = "Devices per node (default ${DEFAULT-VALUE}).")
    int devices = 8;

    @Option(names = "--shards", description = "Collector instances the nodes are grouped on, each with its own spool and producer "
            + "(default: min(nodes, ${DEFAULT-VALUE})).")
    int shards = 32;

    @Option(names = "--keep-alive-seconds", description = "Keep-alive period; devices report a timeout of twice it (default ${DEFAULT-VALUE}).")
    int keepAliveSeconds = 15;

    @Option(names = "--flap-rate", description = "Health flips per device per second during the measured window (default ${DEFAULT-VALUE}).")
    double flapRate = 0.0002;

    @Option(names = "--duration-seconds", description = "Measured window with flapping (default ${DEFAULT-VALUE}).")
    int durationSeconds = 60;

    @Option(names = "--quiet-seconds", description = "Keep-alive-only window (default: keep-alive + 5 s).")
    int quietSeconds = -1;

    @Option(names = "--storm-fraction", description = "After the measured window, flip one device on this fraction of nodes at once (0 = no storm).")
    double stormFraction = 0.0;

    @Option(names = "--silent-nodes", description = "Nodes whose driver goes silent at the end (default ${DEFAULT-VALUE}).")
    int silentNodes = 5;

    @Option(names = "--partitions", description = "Partitions of every topic (default ${DEFAULT-VALUE}).")
    int partitions = 3;

    @Option(names = "--sink-qps", description = "The sink's API rate limit (production default 20; default here ${DEFAULT-VALUE}).")
    double sinkQps = 2000;

    @Option(names = "--sink-concurrency", description = "The sink's concurrent pod writes (default ${DEFAULT-VALUE}).")
    int sinkConcurrency = 4;

    @Option(names = "--sink-events", arity = "1", description = "The sink's Events for transitions, true or false (default "
            + "${DEFAULT-VALUE}; false measures what they cost an incident).")
    boolean sinkEvents = true;

    @Option(names = "--work-dir", description = "Spools and state (default: a temporary directory, deleted after).")
    Path workDir;

    @Option(names = "--api-server", description = "fleet (in-process, the default) or real (etcd and kube-apiserver from scripts/kube).")
    ApiServerKind apiServer = ApiServerKind.fleet;

    @Option(names = "--incidents", split = ",", description = "Incidents after the storm, each a fraction of the nodes changing at once and "
            + "then recovering: below 1, one device of each chosen node turns Unhealthy; 1, every device of every node (e.g. 0.2,1).")
    List<Double> incidents = List.of();

    @Option(names = "--ceiling", description = "On the real API server: measure its own rate for the sink's write, from a plain "
            + "client at the sink's concurrency and priority level, and print the sink's rate against it.")
    boolean ceiling;

    @Option(names = "--max-requests-per-change", description = "Fail when the sink's pod requests (status writes and pod reads) per "
            + "pod change of an incident exceed this (a count, not a time; default: no bound).")
    double maxRequestsPerChange = Double.NaN;

    /** Which API server the sink writes to. */
    enum ApiServerKind { fleet, real }

    @Option(names = "--initial-timeout-seconds", description = "How long every pod may take to show True before the run fails "
            + "(default ${DEFAULT-VALUE}: 80,000 devices on a loaded 2-core machine take minutes).")
    int initialTimeoutSeconds = 900;

    private final Clock clock = Clock.systemUTC();
    private final List<Double> latencies = Collections.synchronizedList(new ArrayList<>());
    private final List<Double> stormLatencies = Collections.synchronizedList(new ArrayList<>());
    private final Map<String, Long> unknownSeenAtMs = new ConcurrentHashMap<>();
    private final Map<String, String> figures = new LinkedHashMap<>();

    public static void main(String[] args) {
        System.exit(new CommandLine(new PipelineBenchmark()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        int shardCount = Math.min(nodes, shards);
        int quiet = quietSeconds >= 0 ? quietSeconds : keepAliveSeconds + 5;
        boolean temporary = workDir == null;
        Path dir = temporary ? Files.createTempDirectory("devhealth-bench-") : Files.createDirectories(workDir);
        System.out.printf(Locale.ROOT, "devhealth pipeline: %,d nodes × %d devices = %,d devices on %d collector shards, keep-alive %d s "
                        + "(timeout %d s), flap %.4f/device/s (damping off), %d partitions, API server %s, %d cores, JDK %s, load %s%n",
                nodes, devices, nodes * devices, shardCount, keepAliveSeconds, 2L * keepAliveSeconds, flapRate, partitions,
                apiServer == ApiServerKind.real ? "kube-apiserver + etcd (scripts/kube)" : "FleetKubernetesApi (in-process)",
                Runtime.getRuntime().availableProcessors(), Runtime.version(), ProcessStats.loadAverage());
        Topics topics = new Topics("bench.");
        String registryUrl = "mem://bench-" + UUID.randomUUID();
        if (ceiling && apiServer != ApiServerKind.real) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--ceiling needs --api-server real");
        }
        try (EmbeddedKafkaCluster kafka = EmbeddedKafkaCluster.start();
             FleetKubernetesApi fleetApi = apiServer == ApiServerKind.fleet ? FleetKubernetesApi.start() : null;
             RealControlPlane realApi = apiServer == ApiServerKind.real ? RealControlPlane.start(dir.resolve("kube"), SimulatedFleet.NAMESPACE)
                     : null) {
            KubernetesClient admin = realApi != null ? realApi.admin() : fleetApi.client();
            String apiUrl = realApi != null ? realApi.url() : fleetApi.url();
            kafka.createTopics(partitions, topics.nodeEvents(), topics.healthTransitions(), topics.podVerdicts(), topics.fleetStats(), topics.deadLetters());
            kafka.createCompactedTopics(partitions, topics.podDeviceStatus());
            Map<String, Object> kafkaClient = kafka.clientProperties();

            long t0 = System.nanoTime();
            createPods(admin, shardCount);
            phase("pods created", t0);
            figures.put("pods created through the API", String.format(Locale.ROOT, "%.1f s", (System.nanoTime() - t0) / 1e9));

            String applicationId = "devhealth-processor-bench";
            Path stateDir = dir.resolve("state");
            SinkConfig sinkConfig = new SinkConfig(withKafka(kafkaClient, topics, Map.of(
                    SinkConfig.SCHEMA_REGISTRY_URL, registryUrl,
                    SinkConfig.KUBERNETES_MASTER, apiUrl,
                    SinkConfig.API_QPS, Double.toString(sinkQps),
                    SinkConfig.API_BURST, Integer.toString((int) Math.max(40, sinkQps)),
                    SinkConfig.WRITE_CONCURRENCY, Integer.toString(sinkConcurrency),
                    SinkConfig.EVENTS_ENABLED, Boolean.toString(sinkEvents))));
            try (ApiServerObserver api = realApi != null ? new ApiServerObserver(realApi, SimulatedFleet.NAMESPACE, this::onTransition)
                         : new ApiServerObserver(fleetApi, SimulatedFleet.NAMESPACE, this::onTransition);
                 QueryableProcessor processor = QueryableProcessor.of(withKafka(kafkaClient, topics, Map.of(
                         ProcessorConfig.SCHEMA_REGISTRY_URL, registryUrl,
                         ProcessorConfig.APPLICATION_ID, applicationId,
                         ProcessorConfig.PROCESSING_GUARANTEE, "exactly_once_v2",
                         ProcessorConfig.STATE_DIR, stateDir.toString(),
                         QueryConfig.BIND_ADDRESS, "127.0.0.1",
                         QueryConfig.PORT, "0",
                         QueryConfig.ADVERTISED_HOST, "127.0.0.1",
                         // Every change is timed to the condition it must produce; damping holds a device that changes
                         // often, as the random flips, storm and incidents of a small fleet do (FlapStormBenchmark measures it).
                         ProcessorConfig.FLAP_THRESHOLD, "0",
                         QuerySecurityConfig.INSECURE, "true")));
                 // On the real API server the sink is its shipped ServiceAccount: RBAC, admission and priority level apply.
                 SinkApp sink = realApi != null ? new SinkApp(sinkConfig, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), clock,
                         realApi.sinkApiServer()) : new SinkApp(sinkConfig);
                 SimulatedFleet fleet = new SimulatedFleet(nodes, devices, shardCount, Duration.ofSeconds(keepAliveSeconds), flapRate,
                         topics, kafkaClient, SchemaRegistries.fromUrl(registryUrl, Map.of()), dir.resolve("spools"), clock);
                 ProcessStats stats = new ProcessStats(kafka.admin(), topics.nodeEvents(), applicationId)) {
                observer = api;
                sinkOutcomes = new SinkOutcomes(sink.meterRegistry());
                fleetForMatching = fleet;
                processor.start();
                sink.start();
                fleet.publishAllocations();

                t0 = System.nanoTime();
                fleet.start();
                await("every pod shows True", () -> api.podsWithCondition("True") >= nodes,
                        () -> notShowing(fleet.nodeNames(), "True"), Duration.ofSeconds(initialTimeoutSeconds), stats);
                phase("initial snapshot written to every pod", t0);
                figures.put("initial fan-out (all devices reported → every pod's condition written)",
                        String.format(Locale.ROOT, "%.1f s; %,d devices turned Unknown by silence meanwhile (deadlines judged at a "
                                        + "record's node time %,d, on the wall-clock tick %,d), %,d reports the fleet "
                                        + "sent more than a timeout after the device's previous one (its own silence); collectors' delivery to Kafka "
                                        + "up to %.1f s behind what they accepted",
                                (System.nanoTime() - t0) / 1e9, silenceExpiries(processor), deadlinesJudgedBy(processor, "record"),
                                deadlinesJudgedBy(processor, "tick"), fleet.lateReports(), oldestUnsentMaxMs / 1e3));

                // Keep-alives only: nothing visible changes, so the sink must not write.
                long patchesBefore = api.statusPatches();
                long eventsBefore = api.eventWrites();
                long keepAlivesBefore = fleet.keepAliveReports();
                long offsetBefore = stats.endOffsets();
                long committedBefore = stats.committedOffsets();
                t0 = System.nanoTime();
                sampleFor(Duration.ofSeconds(quiet), stats);
                double quietSeconds = (System.nanoTime() - t0) / 1e9;
                figures.put("keep-alive window", String.format(Locale.ROOT, "%.0f s, %,d keep-alives published, %,d reports/s into Kafka, "
                                + "%,d reports/s processed, %d status PATCHes, %d Events",
                        quietSeconds, fleet.keepAliveReports() - keepAlivesBefore,
                        Math.round((stats.endOffsets() - offsetBefore) / quietSeconds),
                        Math.round((stats.committedOffsets() - committedBefore) / quietSeconds),
                        api.statusPatches() - patchesBefore, api.eventWrites() - eventsBefore));

                // Flapping: every change is timed from the driver to the API server.
                long patchesAtFlap = api.statusPatches();
                long visibleAtFlap = api.visibleTransitions();
                offsetBefore = stats.endOffsets();
                committedBefore = stats.committedOffsets();
                long reportsBefore = fleet.changeReports() + fleet.keepAliveReports();
                fleet.flapping(true);
                t0 = System.nanoTime();
                sampleFor(Duration.ofSeconds(durationSeconds), stats);
                fleet.flapping(false);
                double window = (System.nanoTime() - t0) / 1e9;
                long published = fleet.changeReports() + fleet.keepAliveReports() - reportsBefore;
                long delivered = stats.endOffsets() - offsetBefore;
                long processed = stats.committedOffsets() - committedBefore;
                await("changes in flight shown", () -> fleet.pending().isEmpty(), () -> pendingChanges(fleet), Duration.ofSeconds(60), stats);
                double expectedFlips = nodes * devices * flapRate * durationSeconds;
                if (flapRate > 0 && latencies.isEmpty()) {
                    throw new IllegalStateException(String.format(Locale.ROOT, "flap window: no change was made and shown (about %.1f "
                            + "expected: nodes × devices × flap rate × duration); sink: %s", expectedFlips, sinkOutcomes.summary()));
                }
                long patches = api.statusPatches() - patchesAtFlap;
                long visible = api.visibleTransitions() - visibleAtFlap;
                figures.put("reports/s published by the collectors (flap window)", String.format(Locale.ROOT, "%,.0f", published / window));
                figures.put("records/s into Kafka (node-events end offsets: reports, heartbeats, allocations; incl. EOS markers: none here)",
                        String.format(Locale.ROOT, "%,.0f", delivered / window));
                figures.put("reports/s processed (processor committed offsets)", String.format(Locale.ROOT, "%,.0f", processed / window));
                figures.put("end-to-end latency, driver change → pod condition seen in the API server",
                        new Percentiles(toArray(latencies)).summary());
                figures.put("sink write amplification (flap window)", String.format(Locale.ROOT,
                        "%d status PATCHes / %d pod-visible transitions = %.2f", patches, visible, visible == 0 ? Double.NaN : (double) patches / visible));

                if (stormFraction > 0) {
                    t0 = System.nanoTime();
                    fleet.storm(stormFraction);
                    await("storm drained", () -> !stormLatencies.isEmpty() && fleet.pending().isEmpty(),
                            () -> stormLatencies.isEmpty() ? "no storm change shown yet; " + pendingChanges(fleet) : pendingChanges(fleet),
                            Duration.ofMinutes(5), stats);
                    figures.put(String.format(Locale.ROOT, "storm: %.0f%% of nodes change at once", stormFraction * 100),
                            String.format(Locale.ROOT, "drained in %.1f s; %s", (System.nanoTime() - t0) / 1e9,
                                    new Percentiles(toArray(stormLatencies)).summary()));
                }

                if (!incidents.isEmpty()) {
                    incidents(fleet, stats, realApi);
                }

                if (silentNodes > 0) {
                    silence(fleet, stats);
                }

                // Nothing lost on the way: every pod ends with the condition of its devices' last state.
                Map<String, String> expected = fleet.expectedConditions();
                await("every pod shows its last state", () -> expected.entrySet().stream()
                                .allMatch(e -> e.getValue().equals(api.condition(e.getKey()))),
                        () -> wrongPods(expected), Duration.ofSeconds(60), stats);
                figures.put("pods ending with their devices' last state", String.format(Locale.ROOT, "%,d of %,d", expected.size(),
                        expected.size()));
                // The query API tells the same story as the API server, pod by pod.
                List<String> disagreeing = QueryAgreement.disagreements(processor.queryAddress().port(), SimulatedFleet.NAMESPACE,
                        expected);
                if (!disagreeing.isEmpty()) {
                    throw new IllegalStateException(String.format(Locale.ROOT, "the query API and the API server disagree on %,d pods, e.g. %s",
                            disagreeing.size(), disagreeing.stream().limit(10).toList()));
                }
                figures.put("pods on which the query API agrees with the API server", String.format(Locale.ROOT, "%,d of %,d",
                        expected.size(), expected.size()));

                if (ceiling) {
                    ceiling(realApi, admin);
                }

                figures.put("consumer lag samples (processor on node-events)", stats.lagSamples());
                figures.put("JVM RSS (whole pipeline, max sampled)", String.format(Locale.ROOT, "%.0f MiB", stats.maxRssBytes() / 1048576.0));
                figures.put("JVM heap used after GC", String.format(Locale.ROOT, "%.0f MiB", ProcessStats.heapAfterGc() / 1048576.0));
                long stateBytes = ProcessStats.directoryBytes(stateDir);
                figures.put("processor state dir (RocksDB + checkpoints)", String.format(Locale.ROOT, "%.1f MiB = %.0f KiB per 1,000 devices",
                        stateBytes / 1048576.0, stateBytes / 1024.0 / (nodes * devices / 1000.0)));
                figures.put("collector spools (all shards)", String.format(Locale.ROOT, "%.1f MiB, %,d records unsent",
                        ProcessStats.directoryBytes(dir.resolve("spools")) / 1048576.0, fleet.spooled()));
                figures.put("API requests after the pods were created (the sink and its informer)", String.format(Locale.ROOT, "%,d status PATCHes, %,d pod reads, %,d Events, %,d other",
                        api.statusPatches(), api.podReads(), api.eventWrites(), api.otherRequests()));
                figures.put("sink outcomes (its own meters)", sinkOutcomes.summary());
            }
        } finally {
            if (temporary) {
                ProcessStats.deleteRecursively(dir);
            }
        }
        System.out.println();
        System.out.printf(Locale.ROOT, "| figure (%,d devices) | value |%n|---|---|%n", nodes * devices);
        figures.forEach((k, v) -> System.out.printf(Locale.ROOT, "| %s | %s |%n", k, v));
        System.out.println("load average at end: " + ProcessStats.loadAverage());
        return 0;
    }

    /**
     * Each incident from a healthy fleet, then the recovery of every device: how long until the last
     * changed pod shows it, how many API requests per changed pod, the sink's write rate, the largest
     * processor lag on the way. A fleet left with Unhealthy devices by the flap window or the storm
     * recovers first, unmeasured.
     */
    private void incidents(SimulatedFleet fleet, ProcessStats stats, RealControlPlane realApi) throws Exception {
        List<String> leftOver = fleet.recoverAll();
        if (!leftOver.isEmpty()) {
            await("earlier changes recovered", () -> fleet.pending().isEmpty(), () -> pendingChanges(fleet), Duration.ofMinutes(10), stats);
        }
        for (double fraction : incidents) {
            boolean everyDevice = fraction >= 1.0;
            String what = String.format(Locale.ROOT, "incident: %s of %.0f%% of the nodes Unhealthy at once",
                    everyDevice ? "every device" : "one device", fraction * 100);
            incidentStep(what, () -> fleet.incident(fraction, everyDevice), fleet, stats, realApi);
            incidentStep(String.format(Locale.ROOT, "recovery after the %.0f%% incident", fraction * 100), fleet::recoverAll, fleet, stats,
                    realApi);
        }
    }

    private void incidentStep(String what, Callable<List<String>> change, SimulatedFleet fleet, ProcessStats stats,
                              RealControlPlane realApi) throws Exception {
        ApiServerObserver api = observer;
        stormLatencies.clear();
        long patchesBefore = api.statusPatches();
        long readsBefore = api.podReads();
        long[] flowBefore = realApi == null ? null : realApi.sinkFlow();
        stats.markLag();
        long t0 = System.nanoTime();
        List<String> pods = change.call();
        await(what + " shown on every pod", () -> fleet.pending().isEmpty(), () -> pendingChanges(fleet),
                Duration.ofSeconds(initialTimeoutSeconds), stats);
        double drained = (System.nanoTime() - t0) / 1e9;
        long patches = api.statusPatches() - patchesBefore;
        long reads = api.podReads() - readsBefore;
        double perChange = (double) (patches + reads) / pods.size();
        String rejected = "";
        if (realApi != null) {
            long[] flow = realApi.sinkFlow();
            rejected = String.format(Locale.ROOT, "; %,d requests in the sink's priority level, %,d rejected (429)", flow[0] - flowBefore[0],
                    flow[1] - flowBefore[1]);
        }
        sinkWriteRate = Math.max(sinkWriteRate, patches / drained);
        figures.put(what, String.format(Locale.ROOT, "%,d pods; last shown after %.1f s; %s; %,d status PATCHes + %,d pod reads = %.2f "
                        + "requests per pod change; %,.0f writes/s; processor lag max %,d%s",
                pods.size(), drained, new Percentiles(toArray(stormLatencies)).summary(), patches, reads, perChange, patches / drained,
                stats.maxLagSinceMark(), rejected));
        phase(what + " shown", t0);
        if (perChange > maxRequestsPerChange) {
            throw new IllegalStateException(String.format(Locale.ROOT, "%s: %.2f pod requests per pod change, more than the bound %.2f "
                    + "(%,d status PATCHes, %,d pod reads, %,d pods changed)", what, perChange, maxRequestsPerChange, patches, reads,
                    pods.size()));
        }
    }

    /** The API server's own rate for the sink's write, at the sink's concurrency, against the sink's best incident rate. */
    private void ceiling(RealControlPlane realApi, KubernetesClient admin) throws Exception {
        try (KubernetesClient asSink = realApi.clientAsSink()) {
            ConditionWriteCeiling.Result result = ConditionWriteCeiling.measure(admin, asSink, SimulatedFleet.NAMESPACE, sinkConcurrency);
            if (result.written() == 0) {
                throw new IllegalStateException("ceiling: the API server took no write; errors by HTTP code " + result.errors());
            }
            figures.put(String.format(Locale.ROOT, "ceiling: the API server's rate for the sink's write (plain client, %d concurrent, "
                            + "the sink's identity and priority level)", sinkConcurrency),
                    String.format(Locale.ROOT, "%,.0f writes/s (%,d writes in %.1f s; errors by HTTP code %s)", result.writesPerSecond(),
                            result.written(), result.seconds(), result.errors()));
            if (sinkWriteRate > 0) {
                figures.put("sink ÷ ceiling (the sink's best incident write rate)", String.format(Locale.ROOT, "%,.0f / %,.0f = %.2f",
                        sinkWriteRate, result.writesPerSecond(), sinkWriteRate / result.writesPerSecond()));
            }
        }
    }

    /** The sink's highest status-write rate over the incidents. */
    private double sinkWriteRate;

    private void silence(SimulatedFleet fleet, ProcessStats stats) throws Exception {
        // Pods went Unknown before their first reports (allocations arrive first): only what follows the silence counts.
        unknownSeenAtMs.clear();
        List<String> names = fleet.silenceSome(silentNodes);
        if (silentNodes > 0 && names.isEmpty()) {
            throw new IllegalStateException("silence: no node could be silenced (each had an Unhealthy device or a change in flight)");
        }

        Map<String, Long> deadlines = new HashMap<>();
        for (String node : names) {
            deadlines.put(SimulatedFleet.podName(node), fleet.deadlineMs(node));
        }
        long lastDeadline = deadlines.values().stream().mapToLong(Long::longValue).max().orElse(0);
        await("silent nodes' pods Unknown", () -> deadlines.keySet().stream().allMatch(unknownSeenAtMs::containsKey),
                () -> "pods not Unknown: " + deadlines.keySet().stream().filter(pod -> !unknownSeenAtMs.containsKey(pod)).sorted().toList(),
                Duration.ofMillis(Math.max(0, lastDeadline - clock.millis()) + 30_000), stats);
        double[] lateness = deadlines.entrySet().stream()
                .mapToDouble(e -> unknownSeenAtMs.get(e.getKey()) - e.getValue()).toArray();
        figures.put(String.format(Locale.ROOT, "silence → Unknown, after the deadline (timeout %d s, %d nodes)", fleet.timeoutSeconds(),
                names.size()), new Percentiles(lateness).summary());
    }

    /** On the observer's thread: a change the fleet made is matched to the condition it must produce. */
    private void onTransition(String pod, String condition, long now) {
        if ("Unknown".equals(condition)) {
            unknownSeenAtMs.putIfAbsent(pod, clock.millis());
        }
        SimulatedFleet fleet = fleetForMatching;
        if (fleet == null) {
            return;
        }
        SimulatedFleet.Pending pending = fleet.pending().get(pod);
        if (pending != null && pending.expectedCondition().equals(condition) && fleet.pending().remove(pod, pending)) {
            (pending.storm() ? stormLatencies : latencies).add((now - pending.changedAtNanos()) / 1e6);
        }
    }

    /** Set once the fleet exists: matching needs its changes in flight. */
    private volatile SimulatedFleet fleetForMatching;
    /** The most a collector's delivery trailed what it accepted, sampled while a phase is awaited, in ms. */
    private long oldestUnsentMaxMs;

    private static double[] toArray(List<Double> samples) {
        synchronized (samples) {
            return samples.stream().mapToDouble(Double::doubleValue).toArray();
        }
    }

    /** The pods of {@code nodeNames} whose condition is not {@code status}, the first 10 named. */
    private String notShowing(List<String> nodeNames, String status) {
        ApiServerObserver api = observer;
        List<String> missing = nodeNames.stream().map(SimulatedFleet::podName).filter(pod -> !status.equals(api.condition(pod))).toList();
        return String.format(Locale.ROOT, "%,d of %,d pods not %s, e.g. %s", missing.size(), nodeNames.size(), status,
                missing.stream().limit(10).map(pod -> pod + "=" + api.condition(pod)).toList());
    }

    /** The pods whose condition is not the expected one, the first 10 named. */
    private String wrongPods(Map<String, String> expected) {
        ApiServerObserver api = observer;
        List<String> wrong = expected.entrySet().stream().filter(e -> !e.getValue().equals(api.condition(e.getKey())))
                .map(e -> e.getKey() + "=" + api.condition(e.getKey()) + " (expected " + e.getValue() + ")").toList();
        return String.format(Locale.ROOT, "%,d of %,d pods not as their devices last were, e.g. %s", wrong.size(), expected.size(),
                wrong.stream().limit(10).toList());
    }

    private static String pendingChanges(SimulatedFleet fleet) {
        Map<String, SimulatedFleet.Pending> pending = Map.copyOf(fleet.pending());
        return String.format(Locale.ROOT, "%,d changes not shown, e.g. %s", pending.size(), pending.entrySet().stream().limit(10)
                .map(e -> e.getKey() + "→" + e.getValue().expectedCondition()).toList());
    }

    /** Each pod bound to the node its statuses will come from (the sink writes nothing else). */
    private void createPods(KubernetesClient client, int shardCount) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int n = 0; n < nodes; n++) {
                String node = SimulatedFleet.nodeName(n);
                String boundTo = SimulatedFleet.boundNode(n, shardCount);
                futures.add(pool.submit(() -> PodFixtures.createRunning(client, PodFixtures.podWithClaim(SimulatedFleet.NAMESPACE,
                        SimulatedFleet.podName(node), boundTo, "main", "gpus", SimulatedFleet.podName(node) + "-gpus", null))));
            }
            for (Future<?> future : futures) {
                future.get();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static Map<String, Object> withKafka(Map<String, Object> kafkaClient, Topics topics, Map<String, String> settings) {
        Map<String, Object> all = new HashMap<>(settings);
        all.put(ProcessorConfig.TOPIC_PREFIX, topics.prefix());
        kafkaClient.forEach((key, value) -> all.put(ServiceConfig.KAFKA_PREFIX + key, String.valueOf(value)));
        return all;
    }

    private static void phase(String what, long startNanos) {
        System.out.printf(Locale.ROOT, "  %-45s %6.1f s  load %s%n", what, (System.nanoTime() - startNanos) / 1e9, ProcessStats.loadAverage());
    }

    private static void sampleFor(Duration window, ProcessStats stats) throws InterruptedException {
        long end = System.nanoTime() + window.toNanos();
        while (System.nanoTime() < end) {
            Thread.sleep(Math.min(1_000, Math.max(1, (end - System.nanoTime()) / 1_000_000)));
            stats.sample();
        }
    }

    /** Device deadlines the processor applied, judged by a record's node time ({@code record}) or its wall-clock tick ({@code tick}). */
    private static long deadlinesJudgedBy(QueryableProcessor processor, String judgedBy) {
        return Math.round(processor.meters().find("devhealth.processor.silence.expiries").tag("judged.by", judgedBy).counters().stream()
                .mapToDouble(Counter::count).sum());
    }

    /** Devices the processor turned Unknown because their source fell silent, from its own transition counters. */
    private static long silenceExpiries(QueryableProcessor processor) {
        return Math.round(processor.meters().find("devhealth.processor.transitions").tag("reason", DeviceHealthMerger.REASON_SILENT).counters().stream()
                .mapToDouble(Counter::count).sum());
    }

    /** @param missing what the condition still lacks, for the failure and the progress lines */
    private void await(String what, BooleanSupplier condition, Supplier<String> missing, Duration timeout, ProcessStats stats)
            throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        long nextProgress = start + 15_000_000_000L;
        while (!condition.getAsBoolean()) {
            long now = System.nanoTime();
            if (now > deadline) {
                throw new IllegalStateException(String.format(Locale.ROOT, "timed out after %.0f s waiting for: %s; %s; sink: %s",
                        (now - start) / 1e9, what, missing.get(), sinkOutcomes == null ? "not started" : sinkOutcomes.summary()));
            }
            if (now > nextProgress) {
                // A long wait says where it stands: a large fleet on a loaded machine takes minutes.
                nextProgress = now + 15_000_000_000L;
                ApiServerObserver api = observer;
                SimulatedFleet fleet = fleetForMatching;
                System.out.printf(Locale.ROOT, "    waiting %.0f s for %s: pods True=%d, status PATCHes=%d, lag %s, collector spools %s "
                                + "records unsent (oldest %s), load %s; %s; sink: %s%n",
                        (now - start) / 1e9, what, api == null ? -1 : api.podsWithCondition("True"), api == null ? -1 : api.statusPatches(),
                        stats.lastLag(), fleet == null ? "-" : String.format(Locale.ROOT, "%,d", fleet.spooled()),
                        fleet == null ? "-" : String.format(Locale.ROOT, "%.1f s", fleet.oldestUnsentMs() / 1e3), ProcessStats.loadAverage(),
                        missing.get(), sinkOutcomes == null ? "not started" : sinkOutcomes.summary());
            }
            Thread.sleep(100);
            stats.sample();
            SimulatedFleet sampled = fleetForMatching;
            if (sampled != null) {
                oldestUnsentMaxMs = Math.max(oldestUnsentMaxMs, sampled.oldestUnsentMs());
            }
        }
    }

    /** For progress lines and failures only. */
    private volatile ApiServerObserver observer;
    private volatile SinkOutcomes sinkOutcomes;
}
