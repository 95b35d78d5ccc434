package io.devhealth.processor.internals;

import io.devhealth.processor.internals.stores.CommitHookKeyValueStore;
import java.util.Objects;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.internals.InternalProcessorContext;
import org.apache.kafka.streams.processor.internals.ProcessorNode;
import org.apache.kafka.streams.processor.internals.ProcessorRecordContext;

/**
 * Lets a processor forward records from a commit hook ({@link CommitHookKeyValueStore}), so that what
 * it sends then belongs to the transaction being committed.
 *
 * <p>Kafka Streams allows {@code forward} only while a processor node is current: while it processes a
 * record or runs a punctuator. The commit hook runs outside both, and a plain {@code forward} there fails
 * with "Current node is unknown". Kafka Streams' own record caches forward from the same place (when
 * they are flushed before a commit) by making their processor node current and giving the records a
 * record context, through internal API; this class does the same, in one place. Like
 * {@link CommitHookKeyValueStore}, it depends on {@code InternalProcessorContext}, an internal
 * interface: re-check it when upgrading Kafka.
 */
final class CommitHookForwarding {

    private final InternalProcessorContext<?, ?> context;
    private final ProcessorNode<?, ?, ?, ?> node;

    /**
     * @param context the processor's context, in its {@code init}: the processor's node is current
     *                there, and is the node records are forwarded from
     */
    CommitHookForwarding(ProcessorContext<?, ?> context) {
        if (!(context instanceof InternalProcessorContext<?, ?> internal)) {
            throw new IllegalStateException("forwarding from the commit hook needs Kafka Streams' own processor context, not "
                    + context.getClass().getName());
        }
        this.context = internal;
        this.node = Objects.requireNonNull(internal.currentNode(), "no current processor node: call from the processor's init");
    }

    /**
     * Runs {@code forwarding}, which may call {@code forward}, as if its processor were processing a
     * record of time {@code timestamp} that came from no topic (as a punctuator does).
     */
    void run(long timestamp, Runnable forwarding) {
        ProcessorNode<?, ?, ?, ?> previousNode = context.currentNode();
        ProcessorRecordContext previousRecord = context.recordContext();
        context.setCurrentNode(node);
        context.setRecordContext(new ProcessorRecordContext(timestamp, -1L, -1, null, new RecordHeaders()));
        try {
            forwarding.run();
        } finally {
            context.setRecordContext(previousRecord);
            context.setCurrentNode(previousNode);
        }
    }
}
