package io.devhealth.collector.publish;

import io.devhealth.collector.ops.CollectorMetrics;
import io.devhealth.collector.spool.AppendResult;
import io.devhealth.collector.spool.DiskSpool;
import io.devhealth.collector.spool.Priority;
import io.devhealth.collector.spool.RecordType;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.ReportKind;
import org.apache.avro.specific.SpecificRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Accepts every record into the {@link DiskSpool}, stamped there with the spool's epoch and the
 * sequence it assigns, so the identity a record carries to Kafka is fixed before anything can be
 * lost. Returns at once: a full spool drops (counted) rather than waits. Closing it does not close
 * the spool.
 */
public final class SpoolingPublisher implements ReportPublisher {

    private static final Logger LOGGER = LoggerFactory.getLogger(SpoolingPublisher.class);

    private final DiskSpool spool;
    private final SpoolCodec codec;
    private final CollectorMetrics metrics;
    private volatile boolean dropping;

    public SpoolingPublisher(DiskSpool spool, SpoolCodec codec, CollectorMetrics metrics) {
        this.spool = spool;
        this.codec = codec;
        this.metrics = metrics;
    }

    @Override
    public void publish(SpecificRecord record) {
        RecordType type = SpoolCodec.typeOf(record);
        Priority priority = Priority.ESSENTIAL;
        String kind = type.label();
        if (record instanceof DeviceHealthReport report) {
            // What the collector knows of the device, whether or not the spool has room for the report.
            metrics.reported(report);
            kind = report.getKind().name();
            if (report.getKind() == ReportKind.KEEPALIVE) {
                priority = Priority.KEEPALIVE;
            }
        } else if (record instanceof NodeAllocations allocations) {
            metrics.allocated(allocations);
        }
        append(type, priority, kind, sequence -> codec.encode(SpoolCodec.stamped(record, spool.epoch(), sequence)));
    }

    private void append(RecordType type, Priority priority, String kind, java.util.function.LongFunction<byte[]> encoder) {
        AppendResult result = spool.append(type, priority, encoder);
        if (result.accepted()) {
            metrics.published(kind);
            if (dropping) {
                dropping = false;
                LOGGER.info("spool accepting again records={} bytes={}", spool.records(), spool.bytes());
            }
        } else if (!dropping) {
            // Once per episode: every drop is counted (spool_dropped_total), a full spool must not flood the log.
            dropping = true;
            LOGGER.warn("spool dropping records kind={} outcome={} records={} bytes={} maxBytes={}", kind, result.outcome(),
                    spool.records(), spool.bytes(), spool.maxBytes());
        }
    }

    @Override
    public void close() {
        // The spool outlives this publisher; its owner closes it.
    }
}
