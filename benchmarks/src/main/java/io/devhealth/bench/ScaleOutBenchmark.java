package io.devhealth.bench;

import io.devhealth.bench.ThroughputBenchmark.Result;
import io.devhealth.bench.pipeline.ProcessStats;
import io.devhealth.processor.DeviceHealthTopology;
import io.devhealth.processor.ProcessorConfig;
import io.devhealth.processor.ProcessorSerdes;
import io.devhealth.processor.TopologyOptions;
import io.devhealth.query.QueryConfig;
import io.devhealth.query.QueryableProcessor;
import io.devhealth.query.access.QuerySecurityConfig;
import io.devhealth.runtime.config.ServiceConfig;
import io.devhealth.schema.Topics;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.schema.serde.SchemaRegistryClient;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.function.Function;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.StreamsConfig;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The processor's steady-state throughput with 1, 2, 3… instances of one application, in one JVM on
 * one in-process broker, with a Kafka Streams pass-through (exactly-once) of the same run as the
 * reference.
 *
 * <p>Each run: the fleet's first contact (every node's allocations and one report per device) is
 * processed by the first instance set, so that what every set sees afterwards is the steady state of a
 * running fleet (keep-alives, 0.1 % health flips), as in {@link ThroughputBenchmark}'s steady-state
 * stage. Then, for each instance count N: N {@link QueryableProcessor}s of the same application id,
 * each with a state directory of its own kept from one set to the next, start; once the group has
 * settled (every instance runs, restores nothing and holds tasks, and every task is held) their
 * processing is paused, the same number of pre-serialized steady-state reports is produced, and
 * processing resumes. The group's rebalances and restores therefore stay out of the timed window, which
 * runs, as in {@link ThroughputBenchmark}, from a tenth of the input committed to the end, the records
 * the application reads back included.
 *
 * <p>All instances share this JVM's cores and one broker: on a machine with fewer cores than the
 * instances need, more instances add coordination, not CPU, and the figures show what scaling out
 * costs rather than what it gains.
 *
 * <pre>java -Xmx3g -cp 'benchmarks/target/benchmarks.jar:benchmarks/target/lib/*' io.devhealth.bench.ScaleOutBenchmark --help</pre>
 */
@Command(name = "scale-out-benchmark", mixinStandardHelpOptions = true,
        description = "Steady-state reports/s of the processor with 1..n instances of one application, beside a Streams pass-through.")
public final class ScaleOutBenchmark implements Callable<Integer> {

    @Option(names = "--reports", description = "Steady-state reports per instance count and run; default ${DEFAULT-VALUE}.")
    int reports = 400_000;

    @Option(names = "--devices", description = "Devices in the fleet, 8 per node; default ${DEFAULT-VALUE}.")
    int devices = 80_000;

    @Option(names = "--instances", split = ",", description = "Instance counts, one timed stage each, in this order; default ${DEFAULT-VALUE}.")
    List<Integer> instances = List.of(1, 2, 3);

    @Option(names = "--partitions", description = "Partitions of every topic: at least the largest instance count, so that each "
            + "instance has work; default ${DEFAULT-VALUE}.")
    int partitions = 6;

    @Option(names = "--standbys", description = "num.standby.replicas of the instances; default ${DEFAULT-VALUE}.")
    int standbys = 0;

    @Option(names = "--runs", description = "Counted runs; the table shows the median over them; default ${DEFAULT-VALUE}.")
    int runs = 1;

    @Option(names = "--warmup-runs", description = "Whole runs first, not counted (a fresh JVM's first stage measures the JIT "
            + "as much as the processor); default ${DEFAULT-VALUE}.")
    int warmupRuns = 0;

    /** One run's figures: the devhealth stage of each instance count, and the pass-through of the same run. */
    private record RunResult(Map<Integer, Result> byInstances, Result passThrough) {}

    public static void main(String[] args) {
        System.exit(new CommandLine(new ScaleOutBenchmark()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        ThroughputBenchmark.rejectRemovedFlags(System.getProperties());
        int largest = instances.stream().mapToInt(Integer::intValue).max().orElseThrow();
        if (instances.stream().anyMatch(n -> n < 1) || partitions < largest || instances.stream().distinct().count() < instances.size()) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--instances " + instances + ": each count once, at least 1 and "
                    + "at most --partitions (" + partitions + "), since an instance without a partition has no work");
        }
        int cores = Runtime.getRuntime().availableProcessors();
        System.out.printf(Locale.ROOT, "devhealth scale-out: %,d steady-state reports per instance count over %,d devices, instances %s, "
                        + "%d partitions, %d standby replicas, %d runs after %d warm-up runs, %d cores, JDK %s, load %s%n",
                reports, devices, instances, partitions, standbys, runs, warmupRuns, cores, Runtime.version(), ProcessStats.loadAverage());
        if (cores < 2 * largest) {
            System.out.printf(Locale.ROOT, "  note: %d instances, a broker and the benchmark share %d cores: more instances cannot add CPU "
                    + "here, so the figures show what scaling out costs, not what it gains%n", largest, cores);
        }
        Path dir = Files.createTempDirectory("devhealth-scale-bench-");
        List<RunResult> results = new ArrayList<>();
        try (EmbeddedKafkaCluster kafka = EmbeddedKafkaCluster.start()) {
            for (int warmup = 1; warmup <= warmupRuns; warmup++) {
                runOnce(kafka, dir, -warmup);
            }
            for (int run = 1; run <= runs; run++) {
                results.add(runOnce(kafka, dir, run));
            }
        } finally {
            ProcessStats.deleteRecursively(dir);
        }
        printTable(results);
        return 0;
    }

    private RunResult runOnce(EmbeddedKafkaCluster kafka, Path dir, int run) throws Exception {
        String label = run < 0 ? "warm-up " + -run : "run " + run;
        String name = "scale-" + (run < 0 ? "w" + -run : Integer.toString(run));
        Topics topics = new Topics(name + ".");
        String passTopic = topics.prefix() + "pass-through";
        kafka.createTopics(partitions, topics.nodeEvents(), topics.healthTransitions(), topics.podVerdicts(), topics.fleetStats(),
                topics.deadLetters(), passTopic);
        kafka.createCompactedTopics(partitions, topics.podDeviceStatus());
        SchemaRegistryClient registry = SchemaRegistries.inMemory(name);
        FleetSimulation fleet = new FleetSimulation(devices, 8, 0.001);
        List<ProducerRecord<String, byte[]>> allocations = fleet.allocations(topics, registry);
        // One sequence for the whole run: each instance count's reports continue every node's sequence where the previous left it.
        List<ProducerRecord<String, byte[]>> all = fleet.reports(topics, registry, fleet.devices() + reports * instances.size());
        String applicationId = name + "-devhealth";
        List<String> readBack = ThroughputBenchmark.readBack(topics, applicationId);
        // Every topic has the same number of partitions, so each sub-topology has that many tasks.
        int tasks = DeviceHealthTopology.build(topics, ProcessorSerdes.over(registry), TopologyOptions.defaults()).describe()
                .subtopologies().size() * partitions;
        Map<String, Object> settings = ThroughputBenchmark.processorSettings(kafka, topics, name, applicationId, dir);
        settings.put(QueryConfig.BIND_ADDRESS, "127.0.0.1");
        settings.put(QueryConfig.PORT, "0");
        settings.put(QueryConfig.ADVERTISED_HOST, "127.0.0.1");
        // Measures processing, not the query API's authentication: on loopback, without credentials.
        settings.put(QuerySecurityConfig.INSECURE, "true");
        settings.put(ServiceConfig.KAFKA_PREFIX + StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, Integer.toString(standbys));
        // Every instance counts as caught up, so that one that joins is given its share of the stateful tasks at once and
        // restores them before the timed window; by default the tasks would stay where their state is and the newcomer would
        // only warm them up, taking them over at a probing rebalance minutes later.
        settings.put(ServiceConfig.KAFKA_PREFIX + StreamsConfig.ACCEPTABLE_RECOVERY_LAG_CONFIG, Long.toString(Long.MAX_VALUE));
        ThroughputBenchmark.streamsOverrides().forEach((key, value) -> settings.put(ServiceConfig.KAFKA_PREFIX + key, value));

        ThroughputBenchmark.produce(kafka, allocations);
        ThroughputBenchmark.produce(kafka, all.subList(0, fleet.devices()));
        Map<Integer, Result> byInstances = new LinkedHashMap<>();
        for (int i = 0; i < instances.size(); i++) {
            int count = instances.get(i);
            List<ProducerRecord<String, byte[]>> steady = all.subList(fleet.devices() + i * reports, fleet.devices() + (i + 1) * reports);
            List<QueryableProcessor> apps = new ArrayList<>();
            try {
                Map<TopicPartition, Long> firstContact = ThroughputBenchmark.endOffsets(kafka.admin(), List.of(topics.nodeEvents()));
                long started = System.nanoTime();
                for (int k = 1; k <= count; k++) {
                    apps.add(start(settings, dir.resolve(name + "-instance-" + k)));
                }
                ProcessorInstances.awaitReady(apps, tasks);
                if (i == 0) {
                    // Group forming and empty stores included: the load that brings the fleet to its steady state, not a figure.
                    ThroughputBenchmark.measure(kafka.admin(), "first contact (not counted)", applicationId, firstContact, readBack,
                            allocations.size() + fleet.devices(), started, "start");
                }
                printAssignment(apps, topics.nodeEvents());
                Result result = steadyState(kafka, apps, applicationId, topics.nodeEvents(), readBack, steady);
                byInstances.put(count, result);
                System.out.printf(Locale.ROOT, "  %s  %d instance(s)  %,10.0f reports/s  %,10.0f per instance   CPU per record: "
                                + "stream threads %.2f µs, whole JVM %.2f µs   load %s%n", label, count, result.perSecond(),
                        result.perSecond() / count, result.streamThreadMicros(), result.processMicros(), ProcessStats.loadAverage());
            } finally {
                apps.forEach(QueryableProcessor::close);
            }
        }
        // Kafka's own reference over the same bytes: every record of the run's node-events, copied by one instance.
        long inTopic = allocations.size() + all.size();
        Result passThrough = ThroughputBenchmark.runStreams(kafka, ThroughputBenchmark.PASS_THROUGH,
                ThroughputBenchmark.passThrough(topics.nodeEvents(), passTopic), name + "-pass", List.of(topics.nodeEvents()), inTopic);
        System.out.printf(Locale.ROOT, "  %s  %-23s %,10.0f rec/s   CPU per record: stream thread %.2f µs, whole JVM %.2f µs%n", label,
                passThrough.stage(), passThrough.perSecond(), passThrough.streamThreadMicros(), passThrough.processMicros());
        return new RunResult(byInstances, passThrough);
    }

    private static QueryableProcessor start(Map<String, Object> settings, Path stateDir) throws Exception {
        Map<String, Object> own = new LinkedHashMap<>(settings);
        own.put(ProcessorConfig.STATE_DIR, Files.createDirectories(stateDir).toString());
        QueryableProcessor app = QueryableProcessor.of(own);
        app.start();
        return app;
    }

    /**
     * Pauses the settled instances, produces {@code steady} while they wait, and times them from their
     * resumption: the input is a backlog, as in {@link ThroughputBenchmark}, without a rebalance in it.
     */
    private static Result steadyState(EmbeddedKafkaCluster kafka, List<QueryableProcessor> apps, String applicationId, String input,
                                      List<String> readBack, List<ProducerRecord<String, byte[]>> steady) throws Exception {
        apps.forEach(app -> app.streams().pause());
        ThroughputBenchmark.produce(kafka, steady);
        Map<TopicPartition, Long> ends = ThroughputBenchmark.endOffsets(kafka.admin(), List.of(input));
        long resumed = System.nanoTime();
        apps.forEach(app -> app.streams().resume());
        return ThroughputBenchmark.measure(kafka.admin(), "devhealth steady state, " + apps.size() + " instance(s) (EOS)", applicationId,
                ends, readBack, steady.size(), resumed, "resume");
    }

    /** Which input partitions each instance processes: the work is split as evenly as the partitions allow. */
    private static void printAssignment(List<QueryableProcessor> apps, String input) {
        for (int k = 0; k < apps.size(); k++) {
            TreeSet<Integer> partitions = new TreeSet<>();
            apps.get(k).streams().metadataForLocalThreads().forEach(thread -> thread.activeTasks().forEach(task -> task.topicPartitions()
                    .stream().filter(tp -> tp.topic().equals(input)).forEach(tp -> partitions.add(tp.partition()))));
            System.out.printf(Locale.ROOT, "    instance %d of %d: %d active tasks, %s partitions %s%n", k + 1, apps.size(),
                    ProcessorInstances.activeTasks(apps.get(k)), input, partitions);
        }
    }

    private void printTable(List<RunResult> results) {
        System.out.println();
        double passThrough = ThroughputBenchmark.median(results.stream().map(RunResult::passThrough).toList());
        double first = median(results, instances.get(0), Result::perSecond);
        System.out.printf(Locale.ROOT, "| instances | median reports/s | reports/s ÷ instances | vs %d instance(s) | vs Streams pass-through "
                + "(EOS, 1 instance) | whole JVM CPU per record µs | stream threads CPU per record µs |%n", instances.get(0));
        System.out.println("|---:|---:|---:|---:|---:|---:|---:|");
        for (int count : instances) {
            double rate = median(results, count, Result::perSecond);
            System.out.printf(Locale.ROOT, "| %d | %,.0f | %,.0f | %.2f× | %.2f× | %.2f | %.2f |%n", count, rate, rate / count, rate / first,
                    rate / passThrough, median(results, count, Result::processMicros), median(results, count, Result::streamThreadMicros));
        }
        System.out.printf(Locale.ROOT, "%nStreams pass-through (EOS, 1 instance): median %,.0f rec/s, whole JVM CPU per record %.2f µs, "
                        + "over %d run(s)%n", passThrough,
                ThroughputBenchmark.medianOf(results.stream().map(r -> r.passThrough().processMicros()).toList()), results.size());
    }

    /** The median of one figure of one instance count's stage over the runs. */
    private static double median(List<RunResult> results, int count, Function<Result, Double> figure) {
        return ThroughputBenchmark.medianOf(results.stream().map(r -> figure.apply(r.byInstances().get(count))).toList());
    }
}
