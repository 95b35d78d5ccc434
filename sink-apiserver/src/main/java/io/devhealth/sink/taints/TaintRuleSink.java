package io.devhealth.sink.taints;

import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.sink.ApiCallPolicy;
import io.devhealth.sink.ApiErrorClass;
import io.devhealth.sink.DeadLetterPublisher;
import io.devhealth.sink.PodStatusSink;
import io.devhealth.sink.SinkMetrics;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumes health-transitions with a consumer group of its own and hands each transition to the
 * {@link TaintRuleController}, on one thread (rules are few; order per device is Kafka's).
 *
 * <ul>
 *   <li>An undecodable record goes to the dead-letter topic with the reason, and so does a transition the
 *       API server rejects (a rule it refuses to store); the consumer goes on.</li>
 *   <li>When the API server does not answer (after {@link ApiCallPolicy}'s retries), the partition is
 *       sought back to the transition and every partition paused for {@code retry.max.interval.ms}; then
 *       it is read again. Applying a transition twice is harmless (rules are created under a name of the
 *       device, a second create is AlreadyExists).</li>
 *   <li>Offsets are committed after each poll, never past a Healthy transition whose rule is still held
 *       ({@link TaintRuleController#heldFrom}).</li>
 *   <li>On every assignment the controller rebuilds its state from the sink's rules.</li>
 * </ul>
 */
public final class TaintRuleSink implements Runnable, AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(TaintRuleSink.class);
    private static final Duration POLL = Duration.ofMillis(500);

    private final Consumer<String, byte[]> consumer;
    private final String topic;
    private final Function<byte[], HealthTransition> decoder;
    private final TaintRuleController controller;
    private final DeadLetterPublisher deadLetters;
    private final SinkMetrics metrics;
    private final Clock clock;
    private final Duration backoff;
    private final AtomicBoolean running = new AtomicBoolean(true);
    /** Per partition, the offset after the last transition applied (what a commit may say, held ones aside). */
    private final Map<TopicPartition, Long> applied = new HashMap<>();
    private final Map<TopicPartition, Long> committed = new HashMap<>();
    private Instant pausedUntil;
    private boolean recoverPending = true;

    public TaintRuleSink(Consumer<String, byte[]> consumer, String topic, Function<byte[], HealthTransition> decoder,
                         TaintRuleController controller, DeadLetterPublisher deadLetters, SinkMetrics metrics, Clock clock, Duration backoff) {
        this.consumer = consumer;
        this.topic = topic;
        this.decoder = decoder;
        this.controller = controller;
        this.deadLetters = deadLetters;
        this.metrics = metrics;
        this.clock = clock;
        this.backoff = backoff;
    }

    @Override
    public void run() {
        consumer.subscribe(List.of(topic), new Rebalance());
        try {
            while (running.get()) {
                pollOnce();
            }
        } catch (WakeupException e) {
            if (running.get()) {
                throw e;
            }
        } finally {
            consumer.close();
        }
    }

    /** One round: poll, apply, tick, commit (tests call it directly). */
    void pollOnce() {
        ConsumerRecords<String, byte[]> records = consumer.poll(POLL);
        Instant now = clock.instant();
        if (recoverPending && !backingOff(now)) {
            try {
                controller.recover();
                recoverPending = false;
            } catch (RuntimeException e) {
                if (ApiErrorClass.of(e) == ApiErrorClass.NOT_FOUND) {
                    LOGGER.error("devicetaintrules not served: retry elsewhere needs resource.k8s.io/v1beta2 DeviceTaintRule "
                            + "(Kubernetes 1.36 with the DRADeviceTaintRules gate), tried again in {} error=\"{}\"", backoff, e.toString());
                } else {
                    LOGGER.warn("devicetaintrules not listed, tried again in {} error=\"{}\"", backoff, e.toString());
                }
                pause(now);
            }
        }
        if (recoverPending) {
            // Nothing is decided without knowing the rules that exist: these records are read again after it.
            seekBack(records);
        } else {
            apply(records, now);
        }
        if (pausedUntil != null && !now.isBefore(pausedUntil)) {
            pausedUntil = null;
            consumer.resume(consumer.paused());
        }
        commit();
    }

    private void apply(ConsumerRecords<String, byte[]> records, Instant now) {
        for (TopicPartition partition : records.partitions()) {
            for (ConsumerRecord<String, byte[]> record : records.records(partition)) {
                if (!handle(record, now)) {
                    consumer.seek(partition, record.offset());
                    pause(now);
                    break;
                }
                applied.put(partition, record.offset() + 1);
            }
        }
        try {
            controller.tick(now);
        } catch (RuntimeException e) {
            if (!PodStatusSink.worthRepeating(e)) {
                throw e;
            }
            LOGGER.warn("devicetaintrule maintenance failed, next round tries again error=\"{}\"", e.toString());
        }
    }

    private boolean backingOff(Instant now) {
        return pausedUntil != null && now.isBefore(pausedUntil);
    }

    private void pause(Instant now) {
        pausedUntil = now.plus(backoff);
        consumer.pause(consumer.assignment());
    }

    private void seekBack(ConsumerRecords<String, byte[]> records) {
        for (TopicPartition partition : records.partitions()) {
            consumer.seek(partition, records.records(partition).get(0).offset());
        }
    }

    /** Applies one record; false when the API server did not answer and the record must be read again. */
    private boolean handle(ConsumerRecord<String, byte[]> record, Instant now) {
        if (record.value() == null) {
            return true;
        }
        HealthTransition transition;
        try {
            transition = decoder.apply(record.value());
        } catch (RuntimeException e) {
            metrics.deadLettered("undecodable");
            deadLetters.publish(record, "undecodable health-transition: " + e.getMessage(), e);
            return true;
        }
        TopicPartition partition = new TopicPartition(record.topic(), record.partition());
        try {
            controller.apply(transition, partition, record.offset(), now);
            return true;
        } catch (RuntimeException e) {
            if (PodStatusSink.worthRepeating(e)) {
                LOGGER.warn("api server not answering, health-transitions paused for {} partition={} offset={} error=\"{}\"", backoff,
                        partition, record.offset(), e.toString());
                return false;
            }
            // Not transient: the API server refused the rule (422, 403) or the transition is unusable. Kept, with why.
            LOGGER.error("health transition not applied to devicetaintrules partition={} offset={} error=\"{}\"", partition,
                    record.offset(), e.toString(), e);
            metrics.deadLettered(ApiErrorClass.of(e) == ApiErrorClass.INVALID ? "invalid" : "unexpected");
            deadLetters.publish(record, "devicetaintrule not applied: " + e, e);
            return true;
        }
    }

    private void commit() {
        Map<TopicPartition, OffsetAndMetadata> commits = new HashMap<>();
        applied.forEach((partition, next) -> {
            OptionalLong held = controller.heldFrom(partition);
            long offset = held.isPresent() ? Math.min(held.getAsLong(), next) : next;
            Long last = committed.get(partition);
            if (last == null || offset > last) {
                commits.put(partition, new OffsetAndMetadata(offset));
            }
        });
        if (!commits.isEmpty()) {
            consumer.commitSync(commits);
            commits.forEach((partition, offset) -> committed.put(partition, offset.offset()));
        }
    }

    @Override
    public void close() {
        running.set(false);
        consumer.wakeup();
    }

    private final class Rebalance implements ConsumerRebalanceListener {

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            // Commit what this instance finished before its new owner reads on.
            commit();
            forget(partitions);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            forget(partitions);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            // Rules another instance created or deleted while it owned these partitions.
            recoverPending = true;
            if (pausedUntil != null) {
                consumer.pause(partitions);
            }
        }

        private void forget(Collection<TopicPartition> partitions) {
            controller.revoked(partitions);
            partitions.forEach(p -> {
                applied.remove(p);
                committed.remove(p);
            });
        }
    }
}
