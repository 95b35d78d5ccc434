package io.devhealth.bench;

import io.devhealth.collector.dra.ObservedDevice;
import io.devhealth.collector.dra.SnapshotDiff;
import io.devhealth.processor.internals.StateSerdes;
import io.devhealth.processor.internals.node.StoredNode;
import io.devhealth.processor.internals.pods.PodStatusBuilder;
import io.devhealth.processor.internals.rules.DeviceHealthMerger;
import io.devhealth.processor.internals.rules.DeviceState;
import io.devhealth.processor.internals.rules.NodeState;
import io.devhealth.processor.internals.rules.PendingRefresh;
import io.devhealth.processor.internals.rules.SourceReport;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.schema.serde.SchemaRegistryClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serializer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * JMH microbenchmarks of the per-record hot paths: the Avro serde (Confluent framing), the collector's
 * snapshot diff, the merge of sources, building a pod's status, and encoding a node's value (written
 * at every commit for every node that had a record).
 *
 * <pre>java -cp 'benchmarks/target/benchmarks.jar:benchmarks/target/lib/*' org.openjdk.jmh.Main HotPathBenchmarks</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class HotPathBenchmarks {

    private Serializer<NodeEvent> serializer;
    private Deserializer<NodeEvent> deserializer;
    private NodeEvent event;
    private byte[] bytes;
    private String topic;
    private SnapshotDiff diff;
    private List<ObservedDevice> snapshot;
    private PodAllocation pod;
    private Map<String, DeviceState> health;
    private List<SourceReport> sources;
    private PodDeviceStatus previous;
    private Serializer<StoredNode> nodeSerializer;
    private StoredNode nodeOf8;

    @Setup
    public void setUp() {
        Topics topics = Topics.withDefaultPrefix();
        topic = topics.nodeEvents();
        SchemaRegistryClient registry = SchemaRegistries.inMemory("jmh");
        FleetSimulation fleet = new FleetSimulation(8, 8, 0.0);
        serializer = AvroSerde.of(NodeEvent.class, registry).serializer();
        deserializer = AvroSerde.of(NodeEvent.class, registry).deserializer();
        bytes = fleet.reports(topics, registry, 1).get(0).value();
        event = deserializer.deserialize(topic, bytes);

        diff = new SnapshotDiff("c", "node-0", FleetSimulation.DRIVER, Duration.ofDays(365), Clock.systemUTC());
        snapshot = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            snapshot.add(new ObservedDevice("node-0", "gpu-" + i, HealthStatus.HEALTHY, "", 30));
        }
        diff.apply(snapshot);

        NodeAllocations allocations = (NodeAllocations) deserializer.deserialize(topic,
                fleet.allocations(topics, registry).get(0).value()).getPayload();
        pod = allocations.getPods().get(0);
        health = new HashMap<>();
        DeviceHealthReport report = (DeviceHealthReport) event.getPayload();
        SourceReport dra = new SourceReport(SourceKind.DRA, FleetSimulation.DRIVER, HealthStatus.HEALTHY, null, null, 0L, 0L, 30_000L);
        SourceReport nvml = new SourceReport(SourceKind.NVML, "nvml", HealthStatus.UNHEALTHY, "XID 48", "XID-48", 0L, 1_000L, 30_000L);
        sources = List.of(dra, nvml);
        health.put("node-0/" + FleetSimulation.DRIVER + "/node-0/gpu-0",
                DeviceState.empty("", "node-0", report.getDevice()).withSource(dra)
                        .withEffective(DeviceHealthMerger.merge(List.of(dra), 1_000L), 1_000L));
        previous = PodStatusBuilder.build("", "node-0", pod, health::get, null, Instant.EPOCH);

        // A node of 8 GPUs after a round of keep-alives: each device with a refresh pending.
        nodeSerializer = StateSerdes.nodeState().serializer();
        Map<String, PendingRefresh> refreshes = new HashMap<>();
        for (int i = 0; i < 8; i++) {
            String key = "node-0/" + FleetSimulation.DRIVER + "/node-0/gpu-" + i;
            refreshes.put(key, new PendingRefresh(key, 1_764_000_030_000L + i, Map.of("DRA:" + FleetSimulation.DRIVER, 1_764_000_000_000L + i)));
        }
        NodeState state = NodeState.empty("").withReport(new NodeState.Watermark(1, 4_242), 1_764_000_000_007L);
        nodeOf8 = new StoredNode(state, refreshes);
    }

    @Benchmark
    public byte[] serializeReport() {
        return serializer.serialize(topic, event);
    }

    @Benchmark
    public NodeEvent deserializeReport() {
        return deserializer.deserialize(topic, bytes);
    }

    /** The steady state of a healthy node: a full snapshot in which nothing changed. */
    @Benchmark
    public Object diffUnchangedSnapshotOf8() {
        return diff.apply(snapshot);
    }

    /** Two sources on one device, one of them Unhealthy: the merge on every report. */
    @Benchmark
    public Object mergeTwoSources() {
        return DeviceHealthMerger.merge(sources, 2_000L);
    }

    /** The node value of a node of 8 GPUs, each with a keep-alive since the last commit. */
    @Benchmark
    public byte[] writeNodeOf8() {
        return nodeSerializer.serialize(topic, nodeOf8);
    }

    @Benchmark
    public PodDeviceStatus buildPodStatus() {
        return PodStatusBuilder.build("", "node-0", pod, health::get, previous, Instant.EPOCH);
    }
}
