package io.devhealth.collector.publish;

import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeDevices;
import io.devhealth.schema.avro.NodeHeartbeat;

/**
 * Where the collector's facts go. Implementations stamp the collector epoch and a per-collector
 * sequence, which the processor uses to drop duplicates and keep order.
 *
 * <p>Called from gRPC stream threads and schedulers: implementations must not block on the
 * network, and must not throw for a full or failing destination (they count it instead).
 */
public interface ReportPublisher extends AutoCloseable {

    void publish(DeviceHealthReport report);

    void publish(NodeHeartbeat heartbeat);

    void publish(NodeAllocations allocations);

    /**
     * The node's device inventory. A default so that publishers written for the health and
     * allocation sources only (test doubles) need not know about inventory.
     */
    default void publish(NodeDevices devices) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " does not publish device inventory");
    }

    @Override
    void close();
}
