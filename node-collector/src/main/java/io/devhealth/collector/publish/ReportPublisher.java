package io.devhealth.collector.publish;

import org.apache.avro.specific.SpecificRecord;

/**
 * Where the collector's facts go: one path for every kind of record the collector writes, the branches of
 * {@code NodeEvent} ({@code DeviceHealthReport}, {@code NodeHeartbeat}, {@code NodeAllocations},
 * {@code NodeDevices}; {@link SpoolCodec#typeOf} says which). Implementations stamp the collector epoch and a
 * per-collector sequence, which the processor uses to drop duplicates and keep order.
 *
 * <p>Called from gRPC stream threads and schedulers: implementations must not block on the
 * network, and must not throw for a full or failing destination (they count it instead).
 */
public interface ReportPublisher extends AutoCloseable {

    /**
     * Publishes one of the node's records.
     *
     * @throws IllegalArgumentException for a record that is no branch of {@code NodeEvent}
     */
    void publish(SpecificRecord record);

    @Override
    void close();
}
