package io.devhealth.collector.publish;

import io.devhealth.collector.dra.Backoff;
import io.devhealth.collector.ops.CollectorMetrics;
import io.devhealth.collector.spool.DiskSpool;
import io.devhealth.collector.spool.SpoolEntry;
import io.devhealth.runtime.security.RecordSignature;
import io.devhealth.runtime.security.RecordSigner;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistryClient;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one thread that drains the {@link DiskSpool} into Kafka, in sequence order, and removes a
 * record only when the broker acknowledged it.
 *
 * <p>Every spool entry, whatever its {@code RecordType}, goes to {@link Topics#nodeEvents()} as a
 * {@link NodeEvent} wrapping the report, heartbeat, allocation snapshot or inventory, so a processor
 * reads one node's records on one partition in exactly the order the spool accepted them.
 *
 * <p>The producer is idempotent with {@code acks=all}, at most 5 requests in flight and an
 * unbounded delivery timeout: while Kafka is down it retries internally, in order, and nothing
 * fails; the spool holds the rest (at most {@code maxInFlight} records are handed to the producer
 * at a time). Each record is keyed by node and carries its identity in headers
 * ({@value #EPOCH_HEADER}, {@value #SEQUENCE_HEADER}) besides the Avro fields, and names the node it
 * speaks for ({@value RecordSignature#NODE_HEADER}); with a node key it is also signed
 * ({@link RecordSigner}: HMAC over node, topic and the exact value bytes sent), so the processor can
 * tell that this node's collector wrote it (docs/SECURITY.md).
 *
 * <p>Failures: a record that can never be sent (it does not decode, or Kafka says it is too large)
 * is logged, counted and removed. A send that fails before reaching the producer (no metadata yet,
 * schema registry down) is retried from that record after a backoff. A send the producer gave up
 * on (fatal producer errors) closes the producer and sends everything unacknowledged again with a
 * new one: duplicates are possible then, never losses.
 */
public final class KafkaSpoolSender implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(KafkaSpoolSender.class);

    public static final String EPOCH_HEADER = "devhealth.epoch";
    public static final String SEQUENCE_HEADER = "devhealth.sequence";
    private static final int MAX_BATCH = 500;
    private static final Duration IDLE_WAIT = Duration.ofMillis(200);

    private final String node;
    private final byte[] nodeHeader;
    private final RecordSigner signer;
    private final String topic;
    private final DiskSpool spool;
    private final SpoolCodec codec;
    private final Supplier<Producer<String, byte[]>> producerFactory;
    private final Serializer<NodeEvent> eventSerializer;
    private final CollectorMetrics metrics;
    private final Clock clock;
    private final int maxInFlight;
    private final Duration closeTimeout;
    private final Backoff backoff = new Backoff(Duration.ofMillis(200), Duration.ofSeconds(10));
    private final Thread thread;
    private volatile boolean running = true;
    private volatile Instant lastLoopAt;
    private volatile boolean connected;
    private volatile boolean delivered;
    private volatile Generation generation;

    /** One producer and what it was handed; a fatal error replaces both. */
    private static final class Generation {
        final Producer<String, byte[]> producer;
        final AtomicInteger inFlight = new AtomicInteger();
        final AtomicReference<Exception> fatal = new AtomicReference<>();

        Generation(Producer<String, byte[]> producer) {
            this.producer = producer;
        }
    }

    /**
     * What a sender is told, as opposed to what it is given to work with (spool, producer, metrics).
     * Built with {@link #builder(String, Topics)}; the collector derives it from its configuration
     * ({@link io.devhealth.collector.CollectorConfig#publisherSettings}).
     *
     * @param node the node every record is keyed by and speaks for
     * @param topics where {@link Topics#nodeEvents()} is
     * @param maxInFlight most records handed to the producer and not yet acknowledged
     * @param closeTimeout how long {@link #close()} gives the producer to deliver what it holds
     * @param signer signs every record with this node's key when present; its node must be {@code node}
     */
    public record Settings(String node, Topics topics, int maxInFlight, Duration closeTimeout, Optional<RecordSigner> signer,
                           boolean autoRegisterSchemas) {

        public static final int DEFAULT_MAX_IN_FLIGHT = 2_000;
        public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(5);

        public Settings {
            Objects.requireNonNull(node, "node");
            Objects.requireNonNull(topics, "topics");
            Objects.requireNonNull(closeTimeout, "closeTimeout");
            Objects.requireNonNull(signer, "signer");
            if (maxInFlight < 1) {
                throw new IllegalArgumentException("maxInFlight must be at least 1");
            }
            if (closeTimeout.isNegative()) {
                throw new IllegalArgumentException("closeTimeout must not be negative");
            }
            if (signer.isPresent() && !signer.get().node().equals(node)) {
                throw new IllegalArgumentException("node key is for node '" + signer.get().node() + "', this collector is node '" + node + "'");
            }
        }

        /** Unsigned, {@value #DEFAULT_MAX_IN_FLIGHT} records in flight, {@link #DEFAULT_CLOSE_TIMEOUT} to close. */
        public static Builder builder(String node, Topics topics) {
            return new Builder(node, topics);
        }

        public static final class Builder {
            private final String node;
            private final Topics topics;
            private int maxInFlight = DEFAULT_MAX_IN_FLIGHT;
            private Duration closeTimeout = DEFAULT_CLOSE_TIMEOUT;
            private Optional<RecordSigner> signer = Optional.empty();
            private boolean autoRegisterSchemas = true;

            private Builder(String node, Topics topics) {
                this.node = node;
                this.topics = topics;
            }

            public Builder maxInFlight(int records) {
                this.maxInFlight = records;
                return this;
            }

            public Builder closeTimeout(Duration timeout) {
                this.closeTimeout = timeout;
                return this;
            }

            /** Signs every record when present (see {@link io.devhealth.collector.CollectorConfig#recordSigner()}). */
            public Builder signer(Optional<RecordSigner> recordSigner) {
                this.signer = recordSigner;
                return this;
            }

            /** Register node-events' schema when missing (default), or only look it up. */
            public Builder autoRegisterSchemas(boolean register) {
                this.autoRegisterSchemas = register;
                return this;
            }

            public Settings build() {
                return new Settings(node, topics, maxInFlight, closeTimeout, signer, autoRegisterSchemas);
            }
        }
    }

    /**
     * A sender that is not running yet ({@link #start()}).
     *
     * @param producerFactory called for the first producer and again after a fatal producer error
     */
    public KafkaSpoolSender(Settings settings, DiskSpool spool, SpoolCodec codec, SchemaRegistryClient registry,
                            Supplier<Producer<String, byte[]>> producerFactory, CollectorMetrics metrics, Clock clock) {
        this.node = settings.node();
        this.nodeHeader = node.getBytes(StandardCharsets.UTF_8);
        this.signer = settings.signer().orElse(null);
        this.topic = settings.topics().nodeEvents();
        this.spool = spool;
        this.codec = codec;
        this.producerFactory = producerFactory;
        this.eventSerializer = AvroSerde.of(NodeEvent.class, registry, false, settings.autoRegisterSchemas()).serializer();
        this.metrics = metrics;
        this.clock = clock;
        this.maxInFlight = settings.maxInFlight();
        this.closeTimeout = settings.closeTimeout();
        this.lastLoopAt = clock.instant();
        this.thread = new Thread(this::run, "devhealth-kafka-sender");
        this.thread.setDaemon(true);
    }

    public void start() {
        LOGGER.info("kafka sender starting node={} topic={} spoolRecords={}", node, topic, spool.records());
        thread.start();
    }

    /** When the sender loop last went round: a stuck sender shows in {@code /healthz}. */
    public Instant lastLoopAt() {
        return lastLoopAt;
    }

    /** Whether the last attempt reached Kafka (for logs and {@code /readyz} detail; not a liveness signal). */
    public boolean connected() {
        return connected;
    }

    private void run() {
        generation = new Generation(producerFactory.get());
        while (running) {
            lastLoopAt = clock.instant();
            if (delivered) {
                delivered = false;
                backoff.reset();
            }
            try {
                Exception fatal = generation.fatal.get();
                if (fatal != null) {
                    replaceProducer(fatal);
                    continue;
                }
                int room = maxInFlight - generation.inFlight.get();
                if (room <= 0) {
                    synchronized (generation) {
                        generation.wait(IDLE_WAIT.toMillis());
                    }
                    continue;
                }
                List<SpoolEntry> batch = spool.nextForSend(Math.min(room, MAX_BATCH));
                if (batch.isEmpty()) {
                    spool.awaitUnsent(IDLE_WAIT);
                    continue;
                }
                for (SpoolEntry entry : batch) {
                    if (!sendOne(entry)) {
                        break;
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (RuntimeException e) {
                LOGGER.error("kafka sender loop error node={} error=\"{}\"", node, e.toString(), e);
                sleep(backoff.next());
            }
        }
    }

    /** @return false when the rest of the batch must wait (the entry was rewound) */
    private boolean sendOne(SpoolEntry entry) {
        ProducerRecord<String, byte[]> record;
        try {
            record = toProducerRecord(entry);
        } catch (SerializationException e) {
            poison(entry, e);
            return true;
        } catch (RuntimeException e) {
            // Schema registry unreachable, or a registration refused: the record waits in the spool.
            retryLater(entry, "schema registry", e);
            return false;
        }
        Generation current = generation;
        long start = System.nanoTime();
        current.inFlight.incrementAndGet();
        try {
            current.producer.send(record, (metadata, error) -> completed(current, entry, start, error));
        } catch (RecordTooLargeException | InvalidRecordException e) {
            current.inFlight.decrementAndGet();
            poison(entry, e);
            return true;
        } catch (RuntimeException e) {
            // Not handed over (no metadata within max.block.ms, producer closed): nothing after it may overtake it.
            current.inFlight.decrementAndGet();
            retryLater(entry, "kafka", e);
            return false;
        }
        return true;
    }

    private ProducerRecord<String, byte[]> toProducerRecord(SpoolEntry entry) {
        // Every spooled record is one branch of NodeEvent's union.
        byte[] value = eventSerializer.serialize(topic, new NodeEvent(codec.decode(entry.type(), entry.payload())));
        RecordHeaders headers = new RecordHeaders();
        headers.add(EPOCH_HEADER, Long.toString(spool.epoch()).getBytes(StandardCharsets.US_ASCII));
        headers.add(SEQUENCE_HEADER, Long.toString(entry.sequence()).getBytes(StandardCharsets.US_ASCII));
        if (signer != null) {
            // Over the exact bytes handed to the producer (ByteArraySerializer): what the processor will read.
            signer.sign(topic, value, headers);
        } else {
            headers.add(RecordSignature.NODE_HEADER, nodeHeader.clone());
        }
        return new ProducerRecord<>(topic, null, entry.acceptedAt().toEpochMilli(), node, value, headers);
    }

    private void completed(Generation owner, SpoolEntry entry, long startNanos, Exception error) {
        try {
            if (error == null) {
                // Acknowledged, whichever producer generation sent it: the broker has it.
                spool.acknowledge(entry);
                metrics.sent(Duration.ofNanos(System.nanoTime() - startNanos));
                if (!connected) {
                    connected = true;
                    LOGGER.info("kafka delivering again node={} spoolRecords={}", node, spool.records());
                }
                delivered = true; // the sender thread resets its backoff (Backoff is not thread-safe)
            } else if (error instanceof RecordTooLargeException || error instanceof RecordBatchTooLargeException
                    || error instanceof InvalidRecordException) {
                poison(entry, error);
            } else if (owner == generation) {
                metrics.sendFailed();
                owner.fatal.compareAndSet(null, error);
            }
        } finally {
            owner.inFlight.decrementAndGet();
            synchronized (owner) {
                owner.notifyAll();
            }
        }
    }

    private void poison(SpoolEntry entry, Exception error) {
        LOGGER.error("record can never be sent, removed from spool node={} sequence={} type={} error=\"{}\"", node,
                entry.sequence(), entry.type(), error.toString());
        metrics.poison();
        spool.acknowledge(entry);
    }

    private void retryLater(SpoolEntry entry, String what, RuntimeException error) {
        metrics.sendFailed();
        spool.rewindTo(entry.sequence());
        Duration delay = backoff.next();
        if (connected) {
            connected = false;
            LOGGER.warn("kafka delivery paused node={} cause={} sequence={} retryInMs={} error=\"{}\"", node, what,
                    entry.sequence(), delay.toMillis(), error.toString());
        } else {
            LOGGER.debug("kafka delivery still paused node={} cause={} error=\"{}\"", node, what, error.toString());
        }
        sleep(delay);
    }

    private void replaceProducer(Exception cause) {
        connected = false;
        LOGGER.warn("kafka producer failed, resending unacknowledged records with a new producer node={} error=\"{}\"",
                node, cause.toString());
        Generation old = generation;
        generation = new Generation(producerFactory.get()); // callbacks of the old one no longer raise errors
        old.producer.close(Duration.ZERO); // aborts what it still holds, running their callbacks
        spool.rewindTo(Long.MIN_VALUE);
        sleep(backoff.next());
    }

    private void sleep(Duration delay) {
        try {
            Thread.sleep(delay.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }

    /** Stops taking records; gives what the producer holds up to the close timeout to be acknowledged. */
    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(closeTimeout.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Generation last = generation;
        if (last != null) {
            last.producer.close(closeTimeout);
        }
    }
}
