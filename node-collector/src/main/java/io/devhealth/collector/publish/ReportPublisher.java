package io.devhealth.collector.publish;

import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeHeartbeat;

/**
 * Where the collector's facts go. Implementations stamp the collector epoch and a per-collector
 * sequence, which the processor uses to drop duplicates and keep order.
 */
public interface ReportPublisher extends AutoCloseable {

    void publish(DeviceHealthReport report);

    void publish(NodeHeartbeat heartbeat);

    void publish(NodeAllocations allocations);

    @Override
    void close();
}
