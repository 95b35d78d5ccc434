package io.devhealth.processor.internals;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A stream thread's transactional producer that refuses to go on after an abort that took records with
 * it: the next {@link #beginTransaction()} throws {@link ProducerFencedException}, which Kafka Streams
 * handles as a fenced producer — every task of the thread closed dirty and rewound to its committed
 * offsets, and a new producer asked for ({@code StreamsProducer.maybeBeginTransaction} turns the exception
 * into a {@code TaskMigratedException}; {@code TaskManager.handleLostAll} closes the tasks and
 * {@code ActiveTaskCreator.reInitializeProducer} replaces the producer; Kafka Streams 4.4).
 *
 * <p>Why: under exactly-once v2 every task of a stream thread writes in one transaction. When Kafka Streams
 * finds one task corrupted it commits the others and then closes the corrupted one dirty, which aborts the
 * transaction; but while a rebalance is in progress that commit is skipped ({@code TaskManager.handleCorruption},
 * {@code commitTasksAndMaybeUpdateCommittableOffsets} returns -1), so the abort takes the other tasks' output
 * since their last commit with it while those tasks go on from where they were, and their positions are
 * committed later: transitions computed once and never written. Every path of Kafka Streams that closes all
 * of a thread's tasks replaces or closes its producer, so a producer asked to begin again after an abort
 * that carried records is the case where tasks that were not closed lost output. Rewinding them all costs a
 * reprocessing from the last commit; it happens only after an abort of records, which is rare (a corrupted
 * task, a failed commit).
 *
 * <p>Used by one stream thread at a time, as Kafka Streams uses its producers.
 */
public final class AbortFencingProducer implements Producer<byte[], byte[]> {

    private static final Logger LOGGER = LoggerFactory.getLogger(AbortFencingProducer.class);

    private final Producer<byte[], byte[]> delegate;
    private final String clientId;
    private final Runnable onFence;
    /** Whether a record was sent since the transaction began. */
    private boolean sent;
    /** Set by an abort that took records with it: no transaction may begin on this producer again. */
    private boolean fenced;

    /** @param onFence told each time this producer fences itself (the processor counts it) */
    public AbortFencingProducer(Producer<byte[], byte[]> delegate, String clientId, Runnable onFence) {
        this.delegate = delegate;
        this.clientId = clientId;
        this.onFence = onFence;
    }

    @Override
    public void beginTransaction() {
        if (fenced) {
            throw new ProducerFencedException("a transaction of producer " + clientId + " was aborted with records of tasks that"
                    + " were not rewound; every task of its stream thread must go back to its committed offsets");
        }
        sent = false;
        delegate.beginTransaction();
    }

    @Override
    public void commitTransaction() {
        delegate.commitTransaction();
        sent = false;
    }

    @Override
    public void abortTransaction() {
        // Fenced before the abort is asked for: an abort that fails (a timeout) leaves the broker to abort the
        // transaction when it times out, and the records are lost all the same.
        if (sent && !fenced) {
            fenced = true;
            onFence.run();
            LOGGER.warn("transaction aborted with records in it; fencing the producer so that every task of its stream thread is"
                    + " rewound to its committed offsets client={}", clientId);
        }
        sent = false;
        delegate.abortTransaction();
    }

    @Override
    public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record) {
        return send(record, null);
    }

    @Override
    public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record, Callback callback) {
        sent = true;
        return delegate.send(record, callback);
    }

    @Override
    public void initTransactions() {
        delegate.initTransactions();
    }

    @Override
    public void sendOffsetsToTransaction(Map<TopicPartition, OffsetAndMetadata> offsets, ConsumerGroupMetadata groupMetadata) {
        delegate.sendOffsetsToTransaction(offsets, groupMetadata);
    }

    @Override
    public void registerMetricForSubscription(KafkaMetric metric) {
        delegate.registerMetricForSubscription(metric);
    }

    @Override
    public void unregisterMetricFromSubscription(KafkaMetric metric) {
        delegate.unregisterMetricFromSubscription(metric);
    }

    @Override
    public void flush() {
        delegate.flush();
    }

    @Override
    public List<PartitionInfo> partitionsFor(String topic) {
        return delegate.partitionsFor(topic);
    }

    @Override
    public Map<MetricName, ? extends Metric> metrics() {
        return delegate.metrics();
    }

    @Override
    public Uuid clientInstanceId(Duration timeout) {
        return delegate.clientInstanceId(timeout);
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public void close(Duration timeout) {
        delegate.close(timeout);
    }
}
