package io.devhealth.sink.postmortem;

import io.devhealth.schema.avro.TerminatedPod;
import io.devhealth.schema.serde.SchemaRegistryClient;
import io.devhealth.sink.SinkConfig;
import io.devhealth.sink.SinkMetrics;
import io.devhealth.sink.SinkProducers;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.RetriableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes the verdict of every terminated pod with devices to pod-verdicts, keyed
 * {@code namespace/name}: the feed of SIEMs, fleet analytics and anyone who asks "infrastructure or
 * application?" without reading Kubernetes.
 *
 * <p>Synchronous, and called before the post-mortem record is marked final: a verdict is then never
 * lost between the two (the freeze is retried until both are done), but may be delivered twice (a
 * failed record write, a sink restart between them). The event's {@code id} is the pod's UID, the
 * same on every delivery, so that consumers de-duplicate.
 */
public final class VerdictPublisher implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(VerdictPublisher.class);

    private final Producer<String, TerminatedPod> producer;
    private final String topic;
    private final SinkMetrics metrics;

    public VerdictPublisher(Producer<String, TerminatedPod> producer, String topic, SinkMetrics metrics) {
        this.producer = producer;
        this.topic = topic;
        this.metrics = metrics;
    }

    public static VerdictPublisher create(SinkConfig config, SchemaRegistryClient registry, SinkMetrics metrics) {
        return new VerdictPublisher(SinkProducers.acknowledged(config, registry, TerminatedPod.class, "verdicts"),
                config.topics().podVerdicts(), metrics);
    }

    /**
     * Publishes and waits for the acknowledgement. Throws {@link KafkaException} when Kafka may take it
     * later (a retriable error: the broker unreachable, a leader moving), so that the freeze is repeated.
     * An error that repeating cannot mend (no ACL for the topic, no schema registered, a record too large)
     * is logged and counted ({@code devhealth.sink.verdicts.failed}) and the verdict given up: one lost
     * verdict, where waiting would stall every pod's writes behind it. The record keeps the verdict.
     */
    public void publish(TerminatedPod verdict) {
        String key = verdict.getPod().getNamespace() + "/" + verdict.getPod().getName();
        try {
            SinkProducers.sendAndWait(producer, new ProducerRecord<>(topic, null, verdict.getRecordedAt().toEpochMilli(), key, verdict),
                    "a pod verdict");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RetriableException) {
                throw new KafkaException("pod verdict not acknowledged", e.getCause());
            }
            giveUp(key, verdict, e.getCause());
            return;
        } catch (KafkaException e) {
            if (e instanceof RetriableException || Thread.currentThread().isInterrupted()) {
                throw e;
            }
            // Thrown by send itself: the value could not be serialized, the producer is closed.
            giveUp(key, verdict, e);
            return;
        }
        metrics.verdictPublished(verdict.getVerdict());
        LOGGER.info("pod verdict published pod={} uid={} node={} verdict={} topic={}", key, verdict.getId(), verdict.getNode(),
                verdict.getVerdict(), topic);
    }

    private void giveUp(String key, TerminatedPod verdict, Throwable error) {
        metrics.verdictFailed(error.getClass().getSimpleName());
        LOGGER.error("pod verdict not published, given up pod={} uid={} verdict={} topic={} error=\"{}\"", key, verdict.getId(),
                verdict.getVerdict(), topic, error.toString());
    }

    @Override
    public void close() {
        producer.close();
    }
}
