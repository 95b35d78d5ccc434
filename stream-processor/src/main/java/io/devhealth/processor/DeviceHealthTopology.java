package io.devhealth.processor;

import io.devhealth.processor.internals.AllocationsProcessor;
import io.devhealth.processor.internals.DeviceReportProcessor;
import io.devhealth.schema.Topics;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.state.Stores;

/**
 * The processor's topology, shared by {@code main} and the tests.
 *
 * <p>All inputs are keyed by node and co-partitioned, so every fact about one node meets in one task
 * and its stores: no repartition topic. Outputs are re-keyed by pod (pod-device-status) and by
 * device (health-transitions) on the way out.
 */
public final class DeviceHealthTopology {

    public static final String DEVICE_STATE_STORE = "device-state";
    public static final String NODE_ALLOCATIONS_STORE = "node-allocations";
    public static final String POD_STATUS_STORE = "pod-status";

    static final String REPORTS_SOURCE = "device-reports-source";
    static final String ALLOCATIONS_SOURCE = "node-allocations-source";
    static final String REPORTS_PROCESSOR = "device-reports-processor";
    static final String ALLOCATIONS_PROCESSOR = "node-allocations-processor";
    public static final String POD_STATUS_SINK = "pod-device-status-sink";
    public static final String TRANSITIONS_SINK = "health-transitions-sink";

    private DeviceHealthTopology() {}

    public static Topology build(Topics topics, ProcessorSerdes serdes) {
        Topology topology = new Topology();
        topology.addSource(REPORTS_SOURCE, Serdes.String().deserializer(), serdes.deviceReports().deserializer(),
                topics.deviceReports());
        topology.addSource(ALLOCATIONS_SOURCE, Serdes.String().deserializer(), serdes.nodeAllocations().deserializer(),
                topics.nodeAllocations());

        topology.addProcessor(REPORTS_PROCESSOR, DeviceReportProcessor::new, REPORTS_SOURCE);
        topology.addProcessor(ALLOCATIONS_PROCESSOR, AllocationsProcessor::new, ALLOCATIONS_SOURCE);

        topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(DEVICE_STATE_STORE),
                Serdes.String(), serdes.deviceState()), REPORTS_PROCESSOR, ALLOCATIONS_PROCESSOR);
        topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(NODE_ALLOCATIONS_STORE),
                Serdes.String(), serdes.nodeAllocations()), REPORTS_PROCESSOR, ALLOCATIONS_PROCESSOR);
        topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(POD_STATUS_STORE),
                Serdes.String(), serdes.podDeviceStatus()), REPORTS_PROCESSOR, ALLOCATIONS_PROCESSOR);

        topology.addSink(POD_STATUS_SINK, topics.podDeviceStatus(), Serdes.String().serializer(),
                serdes.podDeviceStatus().serializer(), REPORTS_PROCESSOR, ALLOCATIONS_PROCESSOR);
        topology.addSink(TRANSITIONS_SINK, topics.healthTransitions(), Serdes.String().serializer(),
                serdes.healthTransitions().serializer(), REPORTS_PROCESSOR);
        return topology;
    }
}
