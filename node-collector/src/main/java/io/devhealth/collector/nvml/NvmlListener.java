package io.devhealth.collector.nvml;

import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.SourceState;

/** Where the NVML source delivers. Called on the source's scheduler thread; must not block for long. */
public interface NvmlListener {

    /** A report to publish (CHANGE, KEEPALIVE or ABSENT). */
    void onReport(DeviceHealthReport report);

    /** The source went up, down or unsupported (for the node heartbeat). */
    default void onSourceState(SourceState state) {}
}
