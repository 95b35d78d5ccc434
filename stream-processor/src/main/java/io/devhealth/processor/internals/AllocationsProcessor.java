package io.devhealth.processor.internals;

import io.devhealth.schema.avro.NodeAllocations;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Keeps each node's latest allocation snapshot and emits the status of pods that appear or change. */
public final class AllocationsProcessor extends NodeStateProcessor<NodeAllocations> {

    private static final Logger LOGGER = LoggerFactory.getLogger(AllocationsProcessor.class);

    @Override
    public void process(Record<String, NodeAllocations> record) {
        NodeAllocations snapshot = record.value();
        if (record.key() == null || snapshot == null) {
            LOGGER.warn("allocations record without key or value skipped key={}", record.key());
            return;
        }
        allocations.put(record.key(), snapshot);
        // Pods that left the node keep their last status: it is the post-mortem record.
        refreshPods(record.key(), pod -> true, record.timestamp());
    }
}
