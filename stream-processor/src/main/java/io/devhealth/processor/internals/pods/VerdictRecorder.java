package io.devhealth.processor.internals.pods;

import io.devhealth.processor.internals.stores.TopologyNames;
import io.devhealth.schema.avro.TerminatedPod;
import java.time.Duration;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps every terminated pod's verdict from pod-verdicts, by pod, at the time it became final (the
 * record's timestamp), for the query API; and passes each verdict on once, for the fleet counts. The
 * sink delivers a verdict at least once, so a second one with the id (the pod's UID) of a verdict
 * already kept for that pod is dropped here: counted once, answered once.
 */
public final class VerdictRecorder implements Processor<String, TerminatedPod, String, TerminatedPod> {

    private static final Logger LOGGER = LoggerFactory.getLogger(VerdictRecorder.class);

    private final Duration retention;
    private WindowStore<String, TerminatedPod> verdicts;
    private ProcessorContext<String, TerminatedPod> context;

    /** @param retention how far back a repeated delivery is recognised (the store's retention) */
    public VerdictRecorder(Duration retention) {
        this.retention = retention;
    }

    @Override
    public void init(ProcessorContext<String, TerminatedPod> context) {
        this.context = context;
        this.verdicts = context.getStateStore(TopologyNames.POD_VERDICT_STORE);
    }

    @Override
    public void process(Record<String, TerminatedPod> record) {
        TerminatedPod verdict = record.value();
        if (record.key() == null || verdict == null) {
            return;
        }
        if (alreadyKept(record.key(), verdict.getId(), record.timestamp())) {
            LOGGER.debug("repeated pod verdict dropped pod={} uid={}", record.key(), verdict.getId());
            return;
        }
        verdicts.put(record.key(), verdict, record.timestamp());
        context.forward(record);
    }

    private boolean alreadyKept(String pod, String id, long timestamp) {
        long from = Math.max(0, timestamp - retention.toMillis());
        try (WindowStoreIterator<TerminatedPod> kept = verdicts.fetch(pod, from, timestamp + retention.toMillis())) {
            while (kept.hasNext()) {
                if (id.equals(kept.next().value.getId())) {
                    return true;
                }
            }
        }
        return false;
    }
}
