package io.devhealth.testkit.kafka;

import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Reads topics from their beginning for a test, and keeps what it read: the one way tests consume.
 *
 * <pre>{@code
 * try (TopicReader<String, HealthTransition> transitions = TopicReader.of(kafka, topics.healthTransitions())
 *         .deserializers(new StringDeserializer(), serde.deserializer()).open()) {
 *     transitions.readUntil(read -> read.stream().anyMatch(r -> r.value().getTo() == UNHEALTHY), Duration.ofSeconds(60));
 *     transitions.readFor(Duration.ofSeconds(1));                // and then nothing more may arrive:
 *     assertThat(transitions.values()).singleElement()...;
 * }
 * }</pre>
 *
 * <p>What it does, so a test need not:
 * <ul>
 *   <li>every partition of the topics is <b>assigned</b>, from offset 0: no consumer group, so no
 *       rebalance wait, no committed offsets, no {@code max.poll.interval.ms} to outlive between two
 *       reads, and a broker restart does not make it read twice. A topic with no partitions yet is
 *       assigned once it has some (checked on every read).
 *   <li>{@code read_committed} by default (what a downstream consumer of an exactly-once producer sees);
 *       {@link Builder#readUncommitted()} for the rest.
 *   <li>every record read is kept, across calls: a test reads in phases ({@code readAtLeast(4)}, act,
 *       {@code readAtLeast(8)}) and each call returns everything read so far, oldest first per partition.
 *   <li>a read that times out fails with an {@link AssertionError} that names the topics and says what
 *       was read: how many records and the last few.
 * </ul>
 * Not thread-safe: one test thread reads (a {@link KafkaConsumer} is single-threaded). Records are
 * deserialized as they are read; a deserializer that throws fails the read.
 *
 * @param <K> key type
 * @param <V> value type
 */
public final class TopicReader<K, V> implements AutoCloseable {

    /** How long one poll waits for records; bounds how late a read notices its condition or deadline. */
    private static final Duration POLL = Duration.ofMillis(100);
    /** How many of the last records a failure shows. */
    private static final int SHOWN = 5;
    /** How much of a record's key or value a failure shows. */
    private static final int SHOWN_CHARS = 300;

    private final KafkaConsumer<K, V> consumer;
    private final List<String> topics;
    private final Set<TopicPartition> assigned = new HashSet<>();
    private final Set<String> assignedTopics = new HashSet<>();
    private final List<ConsumerRecord<K, V>> records = new ArrayList<>();
    private final List<ConsumerRecord<K, V>> view = Collections.unmodifiableList(records);

    private TopicReader(Map<String, Object> properties, Deserializer<K> keys, Deserializer<V> values, List<String> topics) {
        this.consumer = new KafkaConsumer<>(properties, keys, values);
        this.topics = topics;
        assignNewPartitions();
    }

    /**
     * A reader of {@code topics} on the embedded broker's PLAINTEXT listener.
     *
     * @param kafka the broker
     * @param topics one or more topic names
     * @return a builder; bytes until {@link Builder#deserializers} says otherwise
     */
    public static Builder<byte[], byte[]> of(EmbeddedKafkaCluster kafka, String... topics) {
        return of(kafka.clientProperties(), topics);
    }

    /**
     * A reader of {@code topics} with the given client settings: {@code bootstrap.servers} and, for a
     * secured listener, its TLS and SASL settings.
     *
     * @param clientProperties Kafka client properties; copied
     * @param topics one or more topic names
     * @return a builder; bytes until {@link Builder#deserializers} says otherwise
     */
    public static Builder<byte[], byte[]> of(Map<String, ?> clientProperties, String... topics) {
        if (topics.length == 0) {
            throw new IllegalArgumentException("no topic to read");
        }
        return new Builder<>(clientProperties, List.of(topics), new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    /**
     * Reads until {@code condition} holds for everything read so far (checked once before reading, then
     * after every poll).
     *
     * @param condition on every record read so far, oldest first; called with an unmodifiable view
     * @param timeout how long to read at most
     * @return everything read so far, including what was read before this call
     * @throws AssertionError when the condition still does not hold after {@code timeout}
     */
    public List<ConsumerRecord<K, V>> readUntil(Predicate<? super List<ConsumerRecord<K, V>>> condition, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.test(view)) {
            if (System.nanoTime() - deadline >= 0) {
                throw failure("condition not met after " + timeout);
            }
            pollOnce(remaining(deadline));
        }
        return List.copyOf(records);
    }

    /**
     * Reads until at least {@code count} records have been read in all (this call and earlier ones).
     *
     * @return everything read so far; may be more than {@code count}
     * @throws AssertionError when fewer arrived within {@code timeout}
     */
    public List<ConsumerRecord<K, V>> readAtLeast(int count, Duration timeout) {
        return readUntil(read -> read.size() >= count, timeout);
    }

    /**
     * Reads for the whole of {@code duration}: to see that nothing more arrives, compare what it
     * returns with what was read before.
     *
     * @return everything read so far
     */
    public List<ConsumerRecord<K, V>> readFor(Duration duration) {
        long deadline = System.nanoTime() + duration.toNanos();
        while (System.nanoTime() - deadline < 0) {
            pollOnce(remaining(deadline));
        }
        return List.copyOf(records);
    }

    /**
     * Reads up to the end of every partition as it is when this is called (for {@code read_committed}:
     * the last stable offset, so every committed transaction before now), and no further on purpose.
     *
     * @return everything read so far
     * @throws AssertionError when a topic has no partitions or the end is not reached within {@code timeout}
     */
    public List<ConsumerRecord<K, V>> readToEnd(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (assignedTopics.size() < topics.size()) {
            if (System.nanoTime() - deadline >= 0) {
                throw failure("no partitions after " + timeout);
            }
            pollOnce(remaining(deadline));
        }
        Map<TopicPartition, Long> ends = consumer.endOffsets(assigned, timeout);
        while (!reached(ends)) {
            if (System.nanoTime() - deadline >= 0) {
                throw failure("end offsets " + ends + " not reached after " + timeout);
            }
            pollOnce(remaining(deadline));
        }
        return List.copyOf(records);
    }

    /**
     * Polls once (up to 100 ms) and returns everything read so far: for waits a test words itself,
     * e.g. one that must not fail on a timeout because the test reports what is missing afterwards.
     *
     * @return everything read so far
     */
    public List<ConsumerRecord<K, V>> poll() {
        pollOnce(POLL);
        return List.copyOf(records);
    }

    /** @return everything read so far, without reading */
    public List<ConsumerRecord<K, V>> records() {
        return List.copyOf(records);
    }

    /** @return the values of everything read so far, without reading */
    public List<V> values() {
        return records.stream().map(ConsumerRecord::value).toList();
    }

    @Override
    public void close() {
        consumer.close(Duration.ofSeconds(5));
    }

    @Override
    public String toString() {
        return "TopicReader" + topics + "[" + records.size() + " read]";
    }

    private void pollOnce(Duration atMost) {
        assignNewPartitions();
        Duration wait = atMost.compareTo(POLL) < 0 ? atMost : POLL;
        if (assigned.isEmpty()) {
            // Nothing to poll yet (no partitions): wait as a poll would, then look again.
            sleep(wait);
            return;
        }
        consumer.poll(wait).forEach(records::add);
    }

    /** Assigns the partitions of topics that had none so far, from their beginning. */
    private void assignNewPartitions() {
        if (assignedTopics.size() == topics.size()) {
            return;
        }
        List<TopicPartition> added = new ArrayList<>();
        for (String topic : topics) {
            if (assignedTopics.contains(topic)) {
                continue;
            }
            List<PartitionInfo> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(5));
            if (partitions == null || partitions.isEmpty()) {
                continue;
            }
            partitions.forEach(p -> added.add(new TopicPartition(topic, p.partition())));
            assignedTopics.add(topic);
        }
        if (!added.isEmpty()) {
            assigned.addAll(added);
            consumer.assign(assigned);
            consumer.seekToBeginning(added);
        }
    }

    private boolean reached(Map<TopicPartition, Long> ends) {
        for (Map.Entry<TopicPartition, Long> end : ends.entrySet()) {
            if (consumer.position(end.getKey()) < end.getValue()) {
                return false;
            }
        }
        return true;
    }

    private AssertionError failure(String what) {
        StringBuilder message = new StringBuilder().append("reading ").append(topics).append(": ").append(what)
                .append("; read ").append(records.size()).append(records.size() == 1 ? " record" : " records");
        if (!records.isEmpty()) {
            int from = Math.max(0, records.size() - SHOWN);
            message.append(from == 0 ? ":" : ", the last " + (records.size() - from) + ":");
            for (ConsumerRecord<K, V> record : records.subList(from, records.size())) {
                message.append("\n  ").append(record.topic()).append('-').append(record.partition()).append('@').append(record.offset())
                        .append(" key=").append(shown(record.key())).append(" value=").append(shown(record.value()));
            }
        }
        return new AssertionError(message.toString());
    }

    private static String shown(Object value) {
        String text = value instanceof byte[] bytes ? bytes.length + " bytes" : String.valueOf(value);
        return text.length() <= SHOWN_CHARS ? text : text.substring(0, SHOWN_CHARS) + "…";
    }

    private static Duration remaining(long deadline) {
        return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading", e);
        }
    }

    /**
     * What to read with. {@link #open()} creates the consumer.
     *
     * @param <K> key type
     * @param <V> value type
     */
    public static final class Builder<K, V> {
        private final Map<String, ?> clientProperties;
        private final List<String> topics;
        private final Deserializer<K> keys;
        private final Deserializer<V> values;
        private boolean readCommitted = true;

        private Builder(Map<String, ?> clientProperties, List<String> topics, Deserializer<K> keys, Deserializer<V> values) {
            this.clientProperties = clientProperties;
            this.topics = topics;
            this.keys = keys;
            this.values = values;
        }

        /**
         * @param keys how keys are read
         * @param values how values are read
         * @return a builder with the same settings and these deserializers
         */
        public <K2, V2> Builder<K2, V2> deserializers(Deserializer<K2> keys, Deserializer<V2> values) {
            Builder<K2, V2> next = new Builder<>(clientProperties, topics, Objects.requireNonNull(keys, "keys"),
                    Objects.requireNonNull(values, "values"));
            next.readCommitted = readCommitted;
            return next;
        }

        /** Reads records of open and aborted transactions too ({@code read_uncommitted}). */
        public Builder<K, V> readUncommitted() {
            readCommitted = false;
            return this;
        }

        /** @return a reader assigned to every partition the topics have now (the rest as they appear) */
        public TopicReader<K, V> open() {
            Map<String, Object> props = new HashMap<>(clientProperties);
            props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, (readCommitted ? "read_committed" : "read_uncommitted"));
            props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
            // A topic is read, never made: a reader opened before its topic must not create it with one partition.
            props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
            props.remove(ConsumerConfig.GROUP_ID_CONFIG);
            return new TopicReader<>(props, keys, values, topics);
        }
    }
}
