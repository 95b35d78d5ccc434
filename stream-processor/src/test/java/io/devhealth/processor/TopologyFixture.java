package io.devhealth.processor;

import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.ClaimAllocation;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.ContainerAllocation;
import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DevicePluginAllocation;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.FleetStats;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.InventoryDevice;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeDevices;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.avro.NodeHeartbeat;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.avro.SourceState;
import io.devhealth.schema.avro.SourceStatus;
import io.devhealth.schema.avro.TerminatedPod;
import io.devhealth.schema.serde.SchemaRegistries;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;

/**
 * The production topology in a TopologyTestDriver, with a collector-like way of feeding it: records
 * carry (epoch, sequence), observedAt equals the record timestamp, and the driver's wall clock starts
 * at {@link #T0}.
 */
final class TopologyFixture implements AutoCloseable {

    static final String NODE = "node-a";
    static final String DRIVER = "gpu.example.com";
    static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");
    static final long EPOCH = T0.toEpochMilli();

    final Topics topics = Topics.withDefaultPrefix();
    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    final ProcessorSerdes serdes;
    final TopologyTestDriver driver;
    /** node-events, where collectors write everything about their node. */
    final TestInputTopic<String, NodeEvent> events;
    final TestInputTopic<String, byte[]> rawEvents;
    /** pod-verdicts, where the sink writes every terminated pod's verdict. */
    final TestInputTopic<String, TerminatedPod> verdicts;
    final TestOutputTopic<String, PodDeviceStatus> podStatus;
    final TestOutputTopic<String, HealthTransition> transitions;
    final TestOutputTopic<byte[], DeadLetter> deadLetters;
    final TestOutputTopic<String, FleetStats> fleetStats;
    private final TopologyOptions options;
    private long sequence;
    private Instant wall = T0;

    TopologyFixture() {
        this(TimeoutPolicy.defaults());
    }

    TopologyFixture(TimeoutPolicy timeouts) {
        this(options -> options.timeouts(timeouts));
    }

    /** With the default options as {@code customize} changes them (meters are always this fixture's). */
    TopologyFixture(java.util.function.UnaryOperator<TopologyOptions.Builder> customize) {
        this(customize, java.util.Optional.empty());
    }

    /** Also verifying collector records' node signatures with {@code verifier} (principals.secret), when present. */
    TopologyFixture(java.util.function.UnaryOperator<TopologyOptions.Builder> customize,
                    java.util.Optional<io.devhealth.runtime.security.RecordVerifier> verifier) {
        this(customize, verifier, java.util.function.UnaryOperator.identity());
    }

    /** With the topology's serdes as {@code serdesOf} makes them of the fixture's (a test that watches them). */
    TopologyFixture(java.util.function.UnaryOperator<TopologyOptions.Builder> customize,
                    java.util.Optional<io.devhealth.runtime.security.RecordVerifier> verifier,
                    java.util.function.UnaryOperator<ProcessorSerdes> serdesOf) {
        serdes = serdesOf.apply(ProcessorSerdes.over(SchemaRegistries.inMemory("topology-test-" + UUID.randomUUID()))
                .authenticated(topics, verifier, meters));
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "topology-test");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        try {
            props.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("dh-tt").toString());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        DeadLetterHandler.configure(props, topics.deadLetters(), serdes.deadLetters().serializer(), meters,
                DeviceHealthTopology.inputTopics(topics));
        options = customize.apply(TopologyOptions.builder()).meters(meters).build();
        driver = new TopologyTestDriver(DeviceHealthTopology.build(topics, serdes, options), props, T0);
        events = driver.createInputTopic(topics.nodeEvents(), Serdes.String().serializer(), serdes.nodeEvents().serializer());
        rawEvents = driver.createInputTopic(topics.nodeEvents(), Serdes.String().serializer(), Serdes.ByteArray().serializer());
        verdicts = driver.createInputTopic(topics.podVerdicts(), Serdes.String().serializer(), serdes.podVerdicts().serializer());
        podStatus = driver.createOutputTopic(topics.podDeviceStatus(), Serdes.String().deserializer(), serdes.podDeviceStatus().deserializer());
        transitions = driver.createOutputTopic(topics.healthTransitions(), Serdes.String().deserializer(),
                serdes.healthTransitions().deserializer());
        fleetStats = driver.createOutputTopic(topics.fleetStats(), Serdes.String().deserializer(), serdes.fleetStats().deserializer());
        deadLetters = driver.createOutputTopic(topics.deadLetters(), Serdes.ByteArray().deserializer(),
                serdes.deadLetters().deserializer());
    }

    /** The driver's wall clock now. */
    Instant wall() {
        return wall;
    }

    /** Advances the wall clock the way a running processor lives it: one punctuation per second. */
    void runFor(Duration duration) {
        for (long s = 0; s < duration.toSeconds(); s++) {
            jumpWallClock(Duration.ofSeconds(1));
        }
    }

    /** Advances the wall clock in one step: one punctuation after {@code duration}, as after a stall. */
    void jumpWallClock(Duration duration) {
        wall = wall.plus(duration);
        driver.advanceWallClockTime(duration);
    }

    /** Lets the fleet combiner's punctuator send what it folded since its last flush on to the fleet counter. */
    void flushFleetCounts() {
        jumpWallClock(options.fleetFlushInterval());
    }

    static DeviceRef device(String device) {
        return DeviceRef.newBuilder().setDriver(DRIVER).setPool(NODE).setDevice(device).build();
    }

    static DeviceHealthReport.Builder report(String device, HealthStatus health, Instant at) {
        return DeviceHealthReport.newBuilder()
                .setNode(NODE).setSource(SourceKind.DRA).setSourceName(DRIVER)
                .setDevice(device(device))
                .setHealth(health).setKind(ReportKind.CHANGE).setObservedAt(at);
    }

    static final String NVML = "nvml";
    static final String PRODUCT = "NVIDIA H100 80GB HBM3";

    /** The GPU UUID the inventory gives DRA device {@code device}. */
    static String uuid(String device) {
        return "GPU-" + device;
    }

    /** An NVML report: the device known only by its GPU UUID. */
    static DeviceHealthReport.Builder nvml(String uuid, HealthStatus health, Instant at) {
        return DeviceHealthReport.newBuilder()
                .setNode(NODE).setSource(SourceKind.NVML).setSourceName(NVML)
                .setDevice(DeviceRef.newBuilder().setUuid(uuid).build())
                .setHealth(health).setKind(ReportKind.CHANGE).setObservedAt(at);
    }

    /** Publishes the node's inventory as the collector would (next sequence of the current epoch): each DRA device with UUID {@link #uuid}. */
    void inventory(String... devices) {
        NodeDevices snapshot = inventoryOf(devices).setCollectorEpoch(EPOCH).setSequence(++sequence).build();
        pipe(NODE, snapshot, wall());
    }

    /** An inventory of the node without identity (0, 0): each DRA device with UUID {@link #uuid}. */
    static NodeDevices.Builder inventoryOf(String... devices) {
        return inventoryWith(Arrays.stream(devices).map(d -> InventoryDevice.newBuilder().setDriver(DRIVER).setPool(NODE)
                .setDevice(d).setUuid(uuid(d)).setProductName(PRODUCT).build()).toList());
    }

    /** An inventory of the node without identity (0, 0) listing exactly {@code devices}. */
    static NodeDevices.Builder inventoryWith(List<InventoryDevice> devices) {
        return NodeDevices.newBuilder().setNode(NODE).setObservedAt(T0).setDevices(devices);
    }

    /** A pod whose container got GPUs through a device plugin (PodResources device ids = GPU UUIDs). */
    void allocateDevicePlugin(String pod, String resourceName, String... deviceIds) {
        pipe(NODE, devicePluginAllocation(pod, wall(), EPOCH, ++sequence, resourceName, deviceIds), wall());
    }

    /**
     * The node's allocation snapshot as a collector sends it: one pod ({@code ml/<pod>}) whose container got
     * {@code deviceIds} of {@code resourceName} through a device plugin (PodResources device ids = GPU UUIDs).
     */
    static NodeAllocations devicePluginAllocation(String pod, Instant at, long epoch, long sequence, String resourceName,
                                                  String... deviceIds) {
        return NodeAllocations.newBuilder().setNode(NODE).setObservedAt(at)
                .setCollectorEpoch(epoch).setSequence(sequence)
                .setPods(List.of(new PodAllocation("ml", pod, List.of(ContainerAllocation.newBuilder().setName("main")
                        .setDevicePluginResources(List.of(new DevicePluginAllocation(resourceName, List.of(deviceIds)))).build()))))
                .build();
    }

    /** Sends a report as the collector would: next sequence of the current epoch, timestamp = observedAt. */
    void send(DeviceHealthReport.Builder report) {
        DeviceHealthReport built = report.setCollectorEpoch(EPOCH).setSequence(++sequence).build();
        pipe(NODE, built, built.getObservedAt());
    }

    /** Sends {@code payload} as it is (no sequence of the fixture's), as node {@link #NODE}'s event. */
    void sendRaw(SpecificRecord payload, Instant timestamp) {
        pipe(NODE, payload, timestamp);
    }

    /** Pipes {@code payload} (a DeviceHealthReport, NodeHeartbeat, NodeAllocations or NodeDevices) to node-events under {@code key}. */
    void pipe(String key, SpecificRecord payload, Instant timestamp) {
        events.pipeInput(key, new NodeEvent(payload), timestamp);
    }

    /** Sends the node's heartbeat as the collector would (next sequence of the current epoch, timestamp = observedAt). */
    void heartbeat(Instant at, SourceStatus driverStatus) {
        pipe(NODE, heartbeatOf(at, driverStatus).setCollectorEpoch(EPOCH).setSequence(++sequence).build(), at);
    }

    /** A heartbeat of the node without identity (0, 0), observed at {@code at}: the DRA driver {@code driverStatus} since T0. */
    static NodeHeartbeat.Builder heartbeatOf(Instant at, SourceStatus driverStatus) {
        return NodeHeartbeat.newBuilder().setNode(NODE).setObservedAt(at)
                .setSources(List.of(SourceState.newBuilder().setSource(SourceKind.DRA).setSourceName(DRIVER)
                        .setState(driverStatus).setSince(T0).build()));
    }

    void allocate(String pod, String... devices) {
        pipe(NODE, allocation(pod, wall(), EPOCH, ++sequence, devices), wall());
    }

    /** The node's allocation snapshot as a collector sends it: one pod ({@code ml/<pod>}) holding {@code devices} in one claim. */
    static NodeAllocations allocation(String pod, Instant at, long epoch, long sequence, String... devices) {
        List<ClaimDevice> claimDevices = Arrays.stream(devices)
                .map(d -> ClaimDevice.newBuilder().setDriver(DRIVER).setPool(NODE).setDevice(d)
                        .setCdiIds(List.of(DRIVER + "/gpu=" + d)).build())
                .toList();
        return NodeAllocations.newBuilder().setNode(NODE).setObservedAt(at)
                .setCollectorEpoch(epoch).setSequence(sequence)
                .setPods(List.of(new PodAllocation("ml", pod, List.of(ContainerAllocation.newBuilder().setName("main")
                        .setClaims(List.of(new ClaimAllocation(pod + "-gpu", "ml", claimDevices))).build()))))
                .build();
    }

    /** Raw bytes of a value, to pipe a duplicate exactly as it was sent. */
    byte[] encode(NodeEvent event) {
        return serdes.nodeEvents().serializer().serialize(topics.nodeEvents(), event);
    }

    @Override
    public void close() {
        driver.close();
    }
}
