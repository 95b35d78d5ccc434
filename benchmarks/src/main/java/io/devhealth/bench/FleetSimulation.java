package io.devhealth.bench;

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
import io.devhealth.schema.serde.SchemaRegistryClient;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Serializer;

/**
 * A simulated fleet's records, serialized once up front so that every stage of the benchmark reads
 * exactly the same bytes: nodes of {@code devicesPerNode} GPUs, pods of {@code devicesPerPod} of them
 * (one pod per GPU unless said), and a stream of device reports (keep-alives, with a configurable share
 * of health flips).
 */
final class FleetSimulation {

    static final String DRIVER = "gpu.bench.example";
    /**
     * Longer than any stage runs: a stage sends each device one report per round and no keep-alive in between, so
     * with a collector's usual 30 s a stage longer than that (every first contact of 80,000 devices on this machine)
     * turned the devices it reached first Unknown while it ran, each a second transition, history entry and pod
     * status, and measured the silence clock's work as much as the reports', more the slower the run.
     */
    static final long TIMEOUT_SECONDS = 3_600;

    private final int nodes;
    private final int devicesPerNode;
    private final int devicesPerPod;
    private final double flipRate;
    private final Random random = new Random(42);

    FleetSimulation(int devices, int devicesPerNode, double flipRate) {
        this(devices, devicesPerNode, 1, flipRate);
    }

    /** @param devicesPerPod GPUs per pod, a divisor of {@code devicesPerNode} (8 of 8: a node's one training pod) */
    FleetSimulation(int devices, int devicesPerNode, int devicesPerPod, double flipRate) {
        if (devicesPerPod < 1 || devicesPerNode % devicesPerPod != 0) {
            throw new IllegalArgumentException("devices per pod must divide devices per node (" + devicesPerNode + "): " + devicesPerPod);
        }
        this.nodes = Math.max(1, devices / devicesPerNode);
        this.devicesPerNode = devicesPerNode;
        this.devicesPerPod = devicesPerPod;
        this.flipRate = flipRate;
    }

    int devices() {
        return nodes * devicesPerNode;
    }

    int pods() {
        return devices() / devicesPerPod;
    }

    static String node(int i) {
        return "node-" + i;
    }

    List<ProducerRecord<String, byte[]>> allocations(Topics topics, SchemaRegistryClient registry) {
        Serializer<NodeEvent> serializer = AvroSerde.of(NodeEvent.class, registry).serializer();
        List<ProducerRecord<String, byte[]>> records = new ArrayList<>(nodes);
        Instant now = Instant.now();
        for (int n = 0; n < nodes; n++) {
            List<PodAllocation> pods = new ArrayList<>(devicesPerNode / devicesPerPod);
            for (int first = 0; first < devicesPerNode; first += devicesPerPod) {
                List<ClaimDevice> devices = new ArrayList<>(devicesPerPod);
                for (int d = first; d < first + devicesPerPod; d++) {
                    devices.add(ClaimDevice.newBuilder().setDriver(DRIVER).setPool(node(n)).setDevice("gpu-" + d)
                            .setCdiIds(List.of(DRIVER + "/gpu=gpu-" + d)).build());
                }
                String pod = "job-" + n + "-" + first;
                pods.add(new PodAllocation("bench", pod, List.of(ContainerAllocation.newBuilder().setName("main")
                        .setClaims(List.of(new ClaimAllocation(pod + "-gpu", "bench", devices))).build())));
            }
            // Epoch and sequence as a collector sets them: a snapshot at (0, 0) is not after the node's initial watermark.
            NodeAllocations value = NodeAllocations.newBuilder().setNode(node(n)).setObservedAt(now).setCollectorEpoch(1).setSequence(1)
                    .setPods(pods).build();
            records.add(new ProducerRecord<>(topics.nodeEvents(), node(n), serializer.serialize(topics.nodeEvents(), new NodeEvent(value))));
        }
        return records;
    }

    /** {@code count} reports round-robin over the fleet, in per-node sequence order. */
    List<ProducerRecord<String, byte[]>> reports(Topics topics, SchemaRegistryClient registry, int count) {
        Serializer<NodeEvent> serializer = AvroSerde.of(NodeEvent.class, registry).serializer();
        boolean[] unhealthy = new boolean[devices()];
        long[] sequence = new long[nodes];
        List<ProducerRecord<String, byte[]>> records = new ArrayList<>(count);
        Instant start = Instant.now();
        for (int i = 0; i < count; i++) {
            int device = i % devices();
            int n = device / devicesPerNode;
            boolean flip = random.nextDouble() < flipRate;
            if (flip) {
                unhealthy[device] = !unhealthy[device];
            }
            DeviceHealthReport report = DeviceHealthReport.newBuilder()
                    .setNode(node(n)).setSource(SourceKind.DRA).setSourceName(DRIVER)
                    .setDevice(DeviceRef.newBuilder().setDriver(DRIVER).setPool(node(n)).setDevice("gpu-" + device % devicesPerNode).build())
                    .setHealth(unhealthy[device] ? HealthStatus.UNHEALTHY : HealthStatus.HEALTHY)
                    .setMessage(unhealthy[device] ? "XID 79: GPU has fallen off the bus" : null)
                    .setKind(flip ? ReportKind.CHANGE : ReportKind.KEEPALIVE)
                    .setTimeoutSeconds(TIMEOUT_SECONDS)
                    .setObservedAt(start.plusMillis(i / devices() * 15_000L))
                    .setCollectorEpoch(1)
                    .setSequence(++sequence[n])
                    .build();
            records.add(new ProducerRecord<>(topics.nodeEvents(), node(n), serializer.serialize(topics.nodeEvents(), new NodeEvent(report))));
        }
        return records;
    }
}
