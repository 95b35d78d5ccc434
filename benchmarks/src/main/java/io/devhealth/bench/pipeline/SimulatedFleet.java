package io.devhealth.bench.pipeline;

import io.devhealth.collector.dra.ObservedDevice;
import io.devhealth.collector.dra.SnapshotDiff;
import io.devhealth.collector.ops.CollectorMetrics;
import io.devhealth.collector.publish.KafkaReportPublisher;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.ClaimAllocation;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.ContainerAllocation;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.serde.SchemaRegistryClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fleet of simulated GPU nodes driven through the collector's real publishing path: per node a
 * driver's device list and its own {@link SnapshotDiff} (what {@code NodeCollector.onSnapshot} runs),
 * whose reports go through a real {@link KafkaReportPublisher} (RocksDB disk spool, sender thread,
 * idempotent producer). Ten thousand spools and producers do not fit one JVM, so nodes share a
 * collector instance in groups ("shards"): a shard is what the pipeline sees as one node (the Kafka
 * key and the report's {@code node}), while the device pool stays the simulated node's name. A
 * collector reports as its own node, and the sink writes a pod's status only where it comes from the
 * node the pod is bound to, so each pod must be bound to its shard's node ({@link #boundNode}).
 *
 * <p>Every node re-sends its full snapshot once per {@code pulse} (spread over the period, as drivers
 * do); the diff turns that into a keep-alive per device every half timeout. Changes are made by the
 * single driver thread, which also stamps when each change happened.
 */
public final class SimulatedFleet implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(SimulatedFleet.class);

    public static final String DRIVER = "gpu.bench.example";
    public static final String NAMESPACE = "bench";
    private static final long TICK_MS = 100;

    /** A change that the API server has not shown yet. */
    public record Pending(String expectedCondition, long changedAtNanos, boolean storm) {}

    private static final class Node {
        final String name;
        final int shard;
        final SnapshotDiff diff;
        final long[] lastReportAtMs;
        int unhealthyDevice = -1;
        /** Every device Unhealthy, as after a node-wide incident (power, fabric, a bad driver). */
        boolean allUnhealthy;
        volatile boolean silent;

        Node(String name, int shard, SnapshotDiff diff, int devices) {
            this.name = name;
            this.shard = shard;
            this.diff = diff;
            this.lastReportAtMs = new long[devices];
        }
    }

    private final int devicesPerNode;
    private final long timeoutSeconds;
    private final long keepAliveTicks;
    private final double flapsPerDeviceSecond;
    private final Clock clock;
    private final List<Node> nodes = new ArrayList<>();
    private final List<KafkaReportPublisher> shards = new ArrayList<>();
    private final Map<String, Pending> pending = new ConcurrentHashMap<>();
    private final Random random = new Random(7);
    private final AtomicLong changeReports = new AtomicLong();
    private final AtomicLong keepAliveReports = new AtomicLong();
    /**
     * Reports the fleet sent more than a timeout after the device's previous one: silence on the fleet's own clock
     * (its one driver thread fell behind its schedule), which the processor must turn Unknown.
     */
    private final AtomicLong lateReports = new AtomicLong();
    private final ScheduledExecutorService driver = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "bench-fleet-driver");
        thread.setDaemon(true);
        return thread;
    });
    private volatile boolean flapping;
    private volatile double stormFraction = -1;
    private double flapAccumulator;
    private long tick;

    /**
     * @param keepAlive the keep-alive period: devices report a timeout of twice this, and the diff sends
     *     a keep-alive every half timeout
     */
    public SimulatedFleet(int nodeCount, int devicesPerNode, int shardCount, Duration keepAlive, double flapsPerDeviceSecond,
                          Topics topics, Map<String, Object> kafkaClient, SchemaRegistryClient registry, Path spoolRoot,
                          Clock clock) {
        this.devicesPerNode = devicesPerNode;
        this.timeoutSeconds = keepAlive.toSeconds() * 2;
        this.keepAliveTicks = Math.max(1, keepAlive.toMillis() / TICK_MS);
        this.flapsPerDeviceSecond = flapsPerDeviceSecond;
        this.clock = clock;
        for (int s = 0; s < shardCount; s++) {
            String shard = shardName(s);
            // Spool budget, fsync interval and records in flight as a collector has them by default.
            KafkaReportPublisher.Settings settings = KafkaReportPublisher.Settings.builder(shard, topics, spoolRoot.resolve(shard))
                    .clientProperties(kafkaClient).build();
            shards.add(KafkaReportPublisher.start(settings, registry, new CollectorMetrics(new SimpleMeterRegistry()), clock));
        }
        for (int n = 0; n < nodeCount; n++) {
            int shard = shardOf(n, shardCount);
            nodes.add(new Node(nodeName(n), shard,
                    new SnapshotDiff("", shardName(shard), DRIVER, Duration.ofSeconds(timeoutSeconds), clock), devicesPerNode));
        }
    }

    public static String shardName(int shard) {
        return "collector-" + shard;
    }

    private static int shardOf(int node, int shardCount) {
        return node % shardCount;
    }

    /**
     * The node the pod of simulated node {@code node} must be bound to (its {@code spec.nodeName}): the
     * node its shard's collector reports as. Bound anywhere else, the sink's identity check refuses
     * every status of the pod, as it would refuse one node writing to another node's pods.
     */
    public static String boundNode(int node, int shardCount) {
        return shardName(shardOf(node, shardCount));
    }

    public static String nodeName(int node) {
        return "node-" + node;
    }

    /** The one pod of each node: a job using all of the node's devices. */
    public static String podName(String node) {
        return "job-" + node;
    }

    public List<String> nodeNames() {
        return nodes.stream().map(n -> n.name).toList();
    }

    /** Every shard's allocations (one pod per simulated node), published once through the spool like the kubelet poller does. */
    public void publishAllocations() {
        List<List<PodAllocation>> byShard = new ArrayList<>();
        shards.forEach(s -> byShard.add(new ArrayList<>()));
        for (Node node : nodes) {
            List<ClaimDevice> devices = new ArrayList<>();
            for (int d = 0; d < devicesPerNode; d++) {
                devices.add(ClaimDevice.newBuilder().setDriver(DRIVER).setPool(node.name).setDevice(device(d)).build());
            }
            String pod = podName(node.name);
            byShard.get(node.shard).add(new PodAllocation(NAMESPACE, pod, List.of(ContainerAllocation.newBuilder().setName("main")
                    .setClaims(List.of(new ClaimAllocation(pod + "-gpus", NAMESPACE, devices))).build())));
        }
        for (int s = 0; s < shards.size(); s++) {
            shards.get(s).publish(NodeAllocations.newBuilder().setCluster("").setNode(shardName(s)).setObservedAt(clock.instant())
                    .setPods(byShard.get(s)).build());
        }
    }

    static String device(int index) {
        return "gpu-" + index;
    }

    /**
     * Starts pulsing every node's snapshot; the first pulse of each node reports all its devices. Nodes
     * come up spread over one keep-alive period, as collectors of a real fleet started at different
     * times: their keep-alives then arrive evenly instead of in one burst per period.
     */
    public void start() {
        driver.scheduleAtFixedRate(this::onTick, 0, TICK_MS, TimeUnit.MILLISECONDS);
    }

    public void flapping(boolean on) {
        flapping = on;
    }

    /** On the next tick, toggles one device on {@code fraction} of the nodes at once. */
    public void storm(double fraction) {
        stormFraction = fraction;
    }

    /**
     * An incident: at once, one device (or every device) of {@code fraction} of the nodes, spread over
     * the fleet, turns Unhealthy, each pod's change in flight. Only nodes that are all healthy and
     * reporting are chosen, so that every change is one its pod must show.
     *
     * @return the pods changed
     */
    public List<String> incident(double fraction, boolean everyDevice) throws Exception {
        return driver.submit(() -> {
            List<Node> healthy = nodes.stream().filter(n -> !n.silent && n.unhealthyDevice < 0 && !n.allUnhealthy
                    && !pending.containsKey(podName(n.name))).toList();
            int count = (int) Math.round(nodes.size() * fraction);
            if (count > healthy.size()) {
                throw new IllegalStateException(String.format(Locale.ROOT, "incident on %d nodes, but only %d are healthy and reporting", count,
                        healthy.size()));
            }
            List<String> pods = new ArrayList<>(count);
            long now = System.nanoTime();
            for (int i = 0; i < count; i++) {
                Node node = healthy.get((int) ((long) i * healthy.size() / Math.max(1, count)));
                if (everyDevice) {
                    node.allUnhealthy = true;
                } else {
                    node.unhealthyDevice = random.nextInt(devicesPerNode);
                }
                String pod = podName(node.name);
                pending.put(pod, new Pending("False", now, true));
                pods.add(pod);
            }
            // Pending first, then the reports: a change can be shown before the last one is sent.
            for (int i = 0; i < count; i++) {
                pulse(healthy.get((int) ((long) i * healthy.size() / Math.max(1, count))));
            }
            LOGGER.warn("incident nodes={} everyDevice={}", count, everyDevice);
            return pods;
        }).get();
    }

    /** Every Unhealthy device of every reporting node recovers at once; each pod's change in flight. @return the pods changed */
    public List<String> recoverAll() throws Exception {
        return driver.submit(() -> {
            List<Node> recovering = nodes.stream().filter(n -> !n.silent && (n.unhealthyDevice >= 0 || n.allUnhealthy)).toList();
            long now = System.nanoTime();
            List<String> pods = new ArrayList<>(recovering.size());
            for (Node node : recovering) {
                node.unhealthyDevice = -1;
                node.allUnhealthy = false;
                pending.put(podName(node.name), new Pending("True", now, true));
                pods.add(podName(node.name));
            }
            recovering.forEach(this::pulse);
            LOGGER.warn("recovery nodes={}", recovering.size());
            return pods;
        }).get();
    }

    /**
     * Stops the snapshots of up to {@code count} nodes spread over the fleet, all devices healthy and no
     * change in flight (so their pods must go from True to Unknown), as a hung driver would.
     */
    public List<String> silenceSome(int count) throws Exception {
        return driver.submit(() -> {
            List<String> names = new ArrayList<>();
            int step = Math.max(1, nodes.size() / Math.max(1, count));
            for (int i = 0; i < nodes.size() && names.size() < count; i += step) {
                for (int j = i; j < Math.min(nodes.size(), i + step); j++) {
                    Node node = nodes.get(j);
                    if (node.unhealthyDevice < 0 && !node.allUnhealthy && !pending.containsKey(podName(node.name))) {
                        node.silent = true;
                        names.add(node.name);
                        break;
                    }
                }
            }
            return names;
        }).get();
    }

    /** The wall-clock time (ms) at which the processor should declare the node's first device Unknown. */
    public long deadlineMs(String name) throws Exception {
        return driver.submit(() -> {
            Node node = nodes.stream().filter(n -> n.name.equals(name)).findFirst().orElseThrow();
            long earliest = Long.MAX_VALUE;
            for (long at : node.lastReportAtMs) {
                earliest = Math.min(earliest, at);
            }
            return earliest + timeoutSeconds * 1000;
        }).get();
    }

    /**
     * The condition every pod must end with, by pod: {@code Unknown} for a silenced node, {@code False}
     * while one of its devices is Unhealthy, else {@code True}.
     */
    public Map<String, String> expectedConditions() throws Exception {
        return driver.submit(() -> {
            Map<String, String> expected = new LinkedHashMap<>();
            for (Node node : nodes) {
                expected.put(podName(node.name), node.silent ? "Unknown" : node.allUnhealthy || node.unhealthyDevice >= 0 ? "False" : "True");
            }
            return expected;
        }).get();
    }

    public long timeoutSeconds() {
        return timeoutSeconds;
    }

    public Map<String, Pending> pending() {
        return pending;
    }

    public long changeReports() {
        return changeReports.get();
    }

    public long keepAliveReports() {
        return keepAliveReports.get();
    }

    /** Reports sent more than a timeout after their device's previous one (see {@link #lateReports}). */
    public long lateReports() {
        return lateReports.get();
    }

    /**
     * How long ago the oldest record still in any shard's spool was accepted, in ms (0 when every spool is empty):
     * how far the slowest collector's delivery to Kafka trails what it has accepted.
     */
    public long oldestUnsentMs() {
        long now = clock.millis();
        return shards.stream().map(s -> s.spool().oldestAcceptedAt()).flatMap(java.util.Optional::stream)
                .mapToLong(at -> Math.max(0L, now - at.toEpochMilli())).max().orElse(0L);
    }

    /** Records accepted by every shard's spool and not yet acknowledged by Kafka. */
    public long spooled() {
        return shards.stream().mapToLong(s -> s.spool().records()).sum();
    }

    private void onTick() {
        try {
            long now = tick++;
            long bucket = now % (1000 / TICK_MS);
            // Nodes up to this index have started (all of them after one keep-alive period).
            long started = now >= keepAliveTicks ? nodes.size() : (now + 1) * nodes.size() / keepAliveTicks;
            for (int i = (int) bucket; i < started; i += (int) (1000 / TICK_MS)) {
                pulse(nodes.get(i));
            }
            if (flapping) {
                flapAccumulator += nodes.size() * devicesPerNode * flapsPerDeviceSecond * TICK_MS / 1000.0;
                for (; flapAccumulator >= 1; flapAccumulator--) {
                    flipRandomNode(false);
                }
            }
            double storm = stormFraction;
            if (storm > 0) {
                stormFraction = -1;
                int count = (int) Math.round(nodes.size() * storm);
                for (int i = 0; i < count; i++) {
                    flipRandomNode(true);
                }
                LOGGER.warn("storm nodes={}", count);
            }
        } catch (RuntimeException e) {
            LOGGER.error("fleet tick failed error=\"{}\"", e.toString(), e);
        }
    }

    /** Toggles one device of a random node that has no change in flight (at most one device of a pod is ever Unhealthy). */
    private void flipRandomNode(boolean storm) {
        for (int attempt = 0; attempt < 20; attempt++) {
            Node node = nodes.get(random.nextInt(nodes.size()));
            String pod = podName(node.name);
            if (node.silent || node.allUnhealthy || pending.containsKey(pod)) {
                continue;
            }
            String expected;
            if (node.unhealthyDevice >= 0) {
                node.unhealthyDevice = -1;
                expected = "True";
            } else {
                node.unhealthyDevice = random.nextInt(devicesPerNode);
                expected = "False";
            }
            pending.put(pod, new Pending(expected, System.nanoTime(), storm));
            // A driver streams a changed snapshot at once.
            pulse(node);
            return;
        }
    }

    private void pulse(Node node) {
        if (node.silent) {
            return;
        }
        List<ObservedDevice> snapshot = new ArrayList<>(devicesPerNode);
        for (int d = 0; d < devicesPerNode; d++) {
            boolean unhealthy = node.allUnhealthy || d == node.unhealthyDevice;
            snapshot.add(new ObservedDevice(node.name, device(d), unhealthy ? HealthStatus.UNHEALTHY : HealthStatus.HEALTHY,
                    unhealthy ? "XID 79: GPU has fallen off the bus" : "", timeoutSeconds));
        }
        List<DeviceHealthReport> reports = node.diff.apply(snapshot);
        KafkaReportPublisher publisher = shards.get(node.shard);
        long now = clock.millis();
        for (DeviceHealthReport report : reports) {
            publisher.publish(report);
            int device = Integer.parseInt(report.getDevice().getDevice().substring(4));
            if (node.lastReportAtMs[device] > 0 && now - node.lastReportAtMs[device] > timeoutSeconds * 1000) {
                lateReports.incrementAndGet();
            }
            node.lastReportAtMs[device] = now;
            (report.getKind() == ReportKind.KEEPALIVE ? keepAliveReports : changeReports).incrementAndGet();
        }
    }

    @Override
    public void close() {
        driver.shutdownNow();
        for (KafkaReportPublisher shard : shards) {
            try {
                shard.close();
            } catch (RuntimeException e) {
                LOGGER.warn("shard close failed error=\"{}\"", e.toString());
            }
        }
    }
}
