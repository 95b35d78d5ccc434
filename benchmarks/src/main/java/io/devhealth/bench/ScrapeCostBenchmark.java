package io.devhealth.bench;

import io.devhealth.collector.ops.CollectorMetrics;
import io.devhealth.processor.DeadLetterHandler;
import io.devhealth.processor.DeviceHealthTopology;
import io.devhealth.processor.ProcessorSerdes;
import io.devhealth.processor.TopologyOptions;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.ClaimAllocation;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.ContainerAllocation;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.InventoryDevice;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeDevices;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.serde.SchemaRegistries;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;

/**
 * What a Prometheus scrape of devhealth's own meters costs at fleet size, measured: the processor's
 * (state gauges, transition and dead-letter counters…) after its topology, run on Kafka Streams'
 * {@link TopologyTestDriver}, read every node's inventory, allocations and device reports, as the
 * collectors send them; and one collector's (per-device gauges of a node's GPUs, each used by a pod).
 * Each registry is then scraped several times: series (sample lines), bytes and the median time of
 * {@link PrometheusMeterRegistry#scrape()}.
 *
 * <p>Kafka's client and Streams meters and the JVM's are not in it: they grow with tasks, threads and
 * stores, not with devices.
 */
public final class ScrapeCostBenchmark {

    private static final String POOL_PREFIX = "node-";
    private static final String[] DRIVERS = {"gpu.nvidia.com", "gpu.amd.com"};
    private static final String[] PRODUCTS = {"NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "AMD Instinct MI300X"};

    private ScrapeCostBenchmark() {}

    public static void main(String[] args) throws Exception {
        int devices = args.length > 0 ? Integer.parseInt(args[0]) : 80_000;
        int devicesPerNode = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        int scrapes = args.length > 2 ? Integer.parseInt(args[2]) : 11;
        int nodes = devices / devicesPerNode;
        System.out.printf(Locale.ROOT, "scrape cost: %,d devices on %,d nodes (%d each), %d drivers, %d products, 1 %% Unhealthy, "
                + "1 %% Unknown; %d scrapes each; %d cores, JDK %s%n", nodes * devicesPerNode, nodes, devicesPerNode, DRIVERS.length,
                PRODUCTS.length, scrapes, Runtime.getRuntime().availableProcessors(), Runtime.version());

        PrometheusMeterRegistry processor = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        // Scraped while the topology runs: a closed task withdraws its devices from the state gauges.
        feedProcessor(processor, nodes, devicesPerNode, () -> report("processor", processor, scrapes, "after the fleet's records"));

        PrometheusMeterRegistry collector = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        CollectorMetrics.tagNode(collector, "bench", node(0));
        CollectorMetrics metrics = new CollectorMetrics(collector);
        metrics.bindDevices(Clock.systemUTC(), Duration.ofMinutes(5));
        metrics.streamConnected(driver(0), true);
        Instant now = Instant.now();
        metrics.allocated(allocations(0, devicesPerNode, now, 0));
        for (int d = 0; d < devicesPerNode; d++) {
            metrics.reported(report(0, d, devicesPerNode, now, 0));
        }
        report("collector", collector, scrapes, "one node, " + devicesPerNode + " GPUs");
    }

    /** Runs the processor's topology over the fleet's records, then {@code whileRunning}. */
    private static void feedProcessor(PrometheusMeterRegistry meters, int nodes, int devicesPerNode, Runnable whileRunning)
            throws Exception {
        Topics topics = Topics.withDefaultPrefix();
        ProcessorSerdes serdes = ProcessorSerdes.over(SchemaRegistries.inMemory("scrape-cost"));
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "scrape-cost");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("dh-scrape").toString());
        DeadLetterHandler.configure(props, topics.deadLetters(), serdes.deadLetters().serializer(), meters,
                DeviceHealthTopology.inputTopics(topics));
        Instant start = Instant.now();
        long records = 0;
        long began = System.nanoTime();
        try (TopologyTestDriver driver = new TopologyTestDriver(DeviceHealthTopology.build(topics, serdes,
                TopologyOptions.builder().meters(meters).build()), props, start)) {
            TestInputTopic<String, NodeEvent> events = driver.createInputTopic(topics.nodeEvents(), Serdes.String().serializer(),
                    serdes.nodeEvents().serializer());
            for (int n = 0; n < nodes; n++) {
                long sequence = 0;
                events.pipeInput(node(n), new NodeEvent(inventory(n, devicesPerNode, start, ++sequence)), start);
                events.pipeInput(node(n), new NodeEvent(allocations(n, devicesPerNode, start, ++sequence)), start);
                for (int d = 0; d < devicesPerNode; d++) {
                    events.pipeInput(node(n), new NodeEvent(report(n, d, devicesPerNode, start, ++sequence)), start);
                }
                records += 2 + devicesPerNode;
            }
            System.out.printf(Locale.ROOT, "processor fed %,d records in %.1f s%n", records, (System.nanoTime() - began) / 1e9);
            whileRunning.run();
        }
    }

    /** 1 % of the devices Unhealthy (XID 79), 1 % Unknown, the rest Healthy: every one a change from the start. */
    private static DeviceHealthReport report(int node, int device, int devicesPerNode, Instant at, long sequence) {
        int index = node * devicesPerNode + device;
        HealthStatus health = index % 100 == 0 ? HealthStatus.UNHEALTHY : index % 100 == 1 ? HealthStatus.UNKNOWN : HealthStatus.HEALTHY;
        return DeviceHealthReport.newBuilder().setNode(node(node)).setSource(SourceKind.DRA).setSourceName(driver(node))
                .setDevice(DeviceRef.newBuilder().setDriver(driver(node)).setPool(node(node)).setDevice(gpu(device)).build())
                .setHealth(health).setReason(health == HealthStatus.UNHEALTHY ? "XID-79" : null)
                .setMessage(health == HealthStatus.UNHEALTHY ? "XID 79: GPU has fallen off the bus" : null)
                .setKind(ReportKind.CHANGE).setObservedAt(at).setCollectorEpoch(1).setSequence(sequence).build();
    }

    private static NodeDevices inventory(int node, int devicesPerNode, Instant at, long sequence) {
        List<InventoryDevice> devices = new ArrayList<>(devicesPerNode);
        for (int d = 0; d < devicesPerNode; d++) {
            devices.add(InventoryDevice.newBuilder().setDriver(driver(node)).setPool(node(node)).setDevice(gpu(d))
                    .setUuid("GPU-" + node + "-" + d).setProductName(PRODUCTS[node % PRODUCTS.length]).build());
        }
        return NodeDevices.newBuilder().setCluster("bench").setNode(node(node)).setObservedAt(at).setCollectorEpoch(1)
                .setSequence(sequence).setDevices(devices).build();
    }

    /** One pod per GPU. */
    private static NodeAllocations allocations(int node, int devicesPerNode, Instant at, long sequence) {
        List<PodAllocation> pods = new ArrayList<>(devicesPerNode);
        for (int d = 0; d < devicesPerNode; d++) {
            String pod = "job-" + node + "-" + d;
            ClaimDevice device = ClaimDevice.newBuilder().setDriver(driver(node)).setPool(node(node)).setDevice(gpu(d))
                    .setCdiIds(List.of(driver(node) + "/gpu=" + gpu(d))).build();
            pods.add(new PodAllocation("bench", pod, List.of(ContainerAllocation.newBuilder().setName("main")
                    .setClaims(List.of(new ClaimAllocation(pod + "-gpu", "bench", List.of(device)))).build())));
        }
        return NodeAllocations.newBuilder().setNode(node(node)).setObservedAt(at).setCollectorEpoch(1).setSequence(sequence)
                .setPods(pods).build();
    }

    private static String node(int n) {
        return POOL_PREFIX + n;
    }

    private static String driver(int node) {
        return DRIVERS[node % DRIVERS.length];
    }

    private static String gpu(int d) {
        return "gpu-" + d;
    }

    private static void report(String service, PrometheusMeterRegistry registry, int scrapes, String what) {
        long[] nanos = new long[scrapes];
        String body = "";
        for (int i = 0; i < scrapes; i++) {
            long began = System.nanoTime();
            body = registry.scrape();
            nanos[i] = System.nanoTime() - began;
        }
        Arrays.sort(nanos);
        TreeMap<String, Integer> byMetric = new TreeMap<>();
        int series = 0;
        for (String line : body.split("\n")) {
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            series++;
            int end = line.indexOf('{') >= 0 ? line.indexOf('{') : line.indexOf(' ');
            byMetric.merge(line.substring(0, end), 1, Integer::sum);
        }
        System.out.printf(Locale.ROOT, "%s (%s): %,d series, %,d bytes per scrape, scrape %.1f ms median (min %.1f, max %.1f) of %d%n",
                service, what, series, body.getBytes(StandardCharsets.UTF_8).length, nanos[scrapes / 2] / 1e6, nanos[0] / 1e6,
                nanos[scrapes - 1] / 1e6, scrapes);
        byMetric.forEach((metric, count) -> System.out.printf(Locale.ROOT, "  %-70s %,d%n", metric, count));
    }
}
