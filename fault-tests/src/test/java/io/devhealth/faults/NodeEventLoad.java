package io.devhealth.faults;

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
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The collectors of a few nodes, for the processor's fault tests: every 50 ms a round of scripted
 * random health reports (Healthy, Unhealthy, Unknown; repeats allowed, so that unchanged reports must
 * emit nothing; a third of them keep-alives), keyed by node with (epoch, sequence) as the collector
 * writes, each told to the {@link TransitionOracle}; an allocation snapshot of every node first (so
 * that every node's pod exists from the start) and of a random node every 25 rounds. Node {@code i}
 * is {@code node-i}; its one pod, {@code ml/train-node-i}, holds one of its devices.
 *
 * <p>With {@link #replayingSpool}, it also sends what a collector replaying its on-disk spool sends
 * (after its own restart, or a send it could not confirm): records already sent, again, with the same
 * epoch, sequence and content, each node's in the order first sent. These are duplicates the
 * processor must drop, so the oracle never hears of them.
 */
final class NodeEventLoad implements Runnable {

    static final String DRIVER = "gpu.example.com";
    static final String POD_NAMESPACE = "ml";
    /** Health values a scripted report picks from; repeats are allowed (they must not emit anything). */
    private static final HealthStatus[] HEALTHS = {HealthStatus.HEALTHY, HealthStatus.UNHEALTHY, HealthStatus.UNKNOWN};

    private final EmbeddedKafkaCluster kafka;
    private final Topics topics;
    private final String registryName;
    private final TransitionOracle oracle;
    private final Random random;
    private final int nodes;
    private final int devicesPerNode;
    private final int reportsPerRound;
    private final int changePercent;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final Object round = new Object();
    private final Map<String, Long> sequences = new HashMap<>();
    /** The device each node's pod holds in the node's latest allocation snapshot, by node. */
    private final Map<String, String> podDevices = new ConcurrentHashMap<>();
    private final long epoch = System.currentTimeMillis();
    private final Instant base = Instant.now();
    private volatile boolean paused;
    private volatile long sent;
    private volatile long sendingNanos;
    private static final long ROUND_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /**
     * Records kept per node for replays: about 2 s of a node's records at the kill test's rate, so that a
     * replay right after a kill reaches back past the killed instance's last commits (exactly-once commits
     * every 100 ms) into records it had committed.
     */
    static final int SPOOL_RECORDS = 250;
    /** Each node's last {@value #SPOOL_RECORDS} records, in the order sent: what its collector's spool would replay. */
    private final Map<String, ArrayDeque<NodeEvent>> spools = new HashMap<>();
    private int replayEveryRounds;
    private volatile KafkaProducer<String, NodeEvent> events;
    private volatile long replayed;

    /** The mix the fault tests ran first: two thirds changes, a third keep-alives, each of a random health. */
    static final int RANDOM_MIX = -1;

    /**
     * @param reportsPerRound reports sent every 50 ms
     * @param changePercent   {@link #RANDOM_MIX}; or the share of reports, in percent, that are changes of a random
     *                        health, the rest keep-alives of the device's current health, as a fleet sends them
     *                        (a device not reported on yet gets a change)
     */
    NodeEventLoad(EmbeddedKafkaCluster kafka, Topics topics, String registryName, TransitionOracle oracle, Random random, int nodes,
                  int devicesPerNode, int reportsPerRound, int changePercent) {
        if (changePercent != RANDOM_MIX && (changePercent < 0 || changePercent > 100)) {
            throw new IllegalArgumentException("changePercent must be 0..100 or RANDOM_MIX, got " + changePercent);
        }
        this.kafka = kafka;
        this.topics = topics;
        this.registryName = registryName;
        this.oracle = oracle;
        this.random = random;
        this.nodes = nodes;
        this.devicesPerNode = devicesPerNode;
        this.reportsPerRound = reportsPerRound;
        this.changePercent = changePercent;
    }

    static String node(int index) {
        return "node-" + index;
    }

    static String pod(String node) {
        return "train-" + node;
    }

    /** The key of the device as the processor and the oracle name it ({@code node/driver/pool/device}). */
    static String deviceKey(String node, String device) {
        return node + "/" + DRIVER + "/" + node + "/" + device;
    }

    void stop() {
        running.set(false);
    }

    /** Returns once no round is in flight: everything sent so far has been acknowledged by the broker. */
    void pause() {
        synchronized (round) {
            paused = true;
        }
    }

    void resume() {
        paused = false;
    }

    long sent() {
        return sent;
    }

    /** Records sent again as spool replays, periodic and {@link #replaySpools} together. */
    long replayed() {
        return replayed;
    }

    /**
     * Every {@code everyRounds} rounds, one random node's collector replays a segment of its spool
     * ({@link #replaySpool}); set before {@link #run}.
     */
    NodeEventLoad replayingSpool(int everyRounds) {
        if (everyRounds <= 0) {
            throw new IllegalArgumentException("everyRounds must be positive, got " + everyRounds);
        }
        this.replayEveryRounds = everyRounds;
        return this;
    }

    /**
     * Every node's collector replays a segment of its spool now, between rounds, and the broker has
     * acknowledged it all when this returns; works while paused too.
     *
     * @return the records sent again
     */
    int replaySpools() {
        synchronized (round) {
            if (events == null) {
                throw new IllegalStateException("the load is not running");
            }
            int records = 0;
            for (int i = 0; i < nodes; i++) {
                records += replaySpool(events, node(i));
            }
            events.flush();
            return records;
        }
    }

    /** The device each node's pod holds in the node's latest allocation snapshot, by node. */
    Map<String, String> podDevices() {
        return Map.copyOf(podDevices);
    }

    /** Reports sent per second while the load was not paused. */
    long sentPerSecond() {
        return sendingNanos == 0 ? 0 : Math.round(sent / (sendingNanos / 1e9));
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
            synchronized (round) {
                this.events = events;
                for (int i = 0; i < nodes; i++) {
                    send(events, node(i), new NodeEvent(snapshot(node(i))));
                }
            }
            long rounds = 0;
            // At a fixed rate: a round that took long (a flush the broker was slow to acknowledge) does not slow the
            // load down; a load that cannot keep up shows in sentPerSecond.
            long next = System.nanoTime();
            while (running.get()) {
                long slot = System.nanoTime();
                boolean sending;
                synchronized (round) {
                    sending = !paused;
                    if (sending) {
                        sendRound(events, rounds++);
                    }
                }
                next += ROUND_NANOS;
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                } else {
                    next = System.nanoTime();
                }
                if (sending) {
                    sendingNanos += System.nanoTime() - slot;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            synchronized (round) {
                this.events = null;
            }
        }
    }

    private void sendRound(KafkaProducer<String, NodeEvent> events, long rounds) {
        for (int i = 0; i < reportsPerRound; i++) {
            String node = node(random.nextInt(nodes));
            String device = "gpu-" + random.nextInt(devicesPerNode);
            HealthStatus health = HEALTHS[random.nextInt(HEALTHS.length)];
            ReportKind kind;
            if (changePercent == RANDOM_MIX) {
                // A third are keep-alives: of the device's current health a refresh the processor keeps in
                // its node's state (PendingRefresh), which every restart must restore with the device.
                kind = random.nextInt(3) == 0 ? ReportKind.KEEPALIVE : ReportKind.CHANGE;
            } else {
                HealthStatus current = oracle.current(deviceKey(node, device));
                boolean keepAlive = current != HealthStatus.UNKNOWN && random.nextInt(100) >= changePercent;
                kind = keepAlive ? ReportKind.KEEPALIVE : ReportKind.CHANGE;
                health = keepAlive ? current : health;
            }
            long sequence = sequences.merge(node, 1L, Long::sum);
            DeviceHealthReport report = DeviceHealthReport.newBuilder()
                    .setNode(node).setSource(SourceKind.DRA).setSourceName(DRIVER)
                    .setDevice(DeviceRef.newBuilder().setDriver(DRIVER).setPool(node).setDevice(device).build())
                    .setHealth(health).setKind(kind).setMessage(health == HealthStatus.UNHEALTHY ? "XID 79" : null)
                    .setObservedAt(base.plusMillis(sequence)).setCollectorEpoch(epoch).setSequence(sequence).build();
            send(events, node, new NodeEvent(report));
            oracle.reported(deviceKey(node, device), health);
            sent++;
        }
        if (rounds % 25 == 0) {
            String node = node(random.nextInt(nodes));
            send(events, node, new NodeEvent(snapshot(node)));
        }
        if (replayEveryRounds > 0 && rounds % replayEveryRounds == replayEveryRounds - 1) {
            replaySpool(events, node(random.nextInt(nodes)));
        }
        events.flush();
    }

    /** Sends a record for the first time and keeps it in its node's spool. */
    private void send(KafkaProducer<String, NodeEvent> events, String node, NodeEvent event) {
        // Key = node, as the collector writes: per-device order is the partition's order.
        events.send(new ProducerRecord<>(topics.nodeEvents(), node, event));
        ArrayDeque<NodeEvent> spool = spools.computeIfAbsent(node, n -> new ArrayDeque<>());
        if (spool.size() == SPOOL_RECORDS) {
            spool.removeFirst();
        }
        spool.addLast(event);
    }

    /**
     * Sends {@code node}'s spool again from a random record to its end, as a collector replays from the
     * oldest record it cannot prove was delivered: the same records, so the same epoch and sequence.
     *
     * @return the records sent again
     */
    private int replaySpool(KafkaProducer<String, NodeEvent> events, String node) {
        List<NodeEvent> spool = List.copyOf(spools.getOrDefault(node, new ArrayDeque<>()));
        if (spool.isEmpty()) {
            return 0;
        }
        List<NodeEvent> segment = spool.subList(random.nextInt(spool.size()), spool.size());
        for (NodeEvent event : segment) {
            events.send(new ProducerRecord<>(topics.nodeEvents(), node, event));
        }
        replayed += segment.size();
        return segment.size();
    }

    private NodeAllocations snapshot(String node) {
        long sequence = sequences.merge(node, 1L, Long::sum);
        String device = "gpu-" + random.nextInt(devicesPerNode);
        podDevices.put(node, device);
        ClaimDevice claimDevice = ClaimDevice.newBuilder().setDriver(DRIVER).setPool(node).setDevice(device)
                .setCdiIds(List.of(DRIVER + "/gpu=" + device)).build();
        return NodeAllocations.newBuilder().setNode(node).setObservedAt(base.plusMillis(sequence))
                .setCollectorEpoch(epoch).setSequence(sequence)
                .setPods(List.of(new PodAllocation(POD_NAMESPACE, pod(node), List.of(ContainerAllocation.newBuilder().setName("main")
                        .setClaims(List.of(new ClaimAllocation("train-gpu", POD_NAMESPACE, List.of(claimDevice)))).build()))))
                .build();
    }
}
