package io.devhealth.collector.publish;

import io.devhealth.collector.ops.CollectorMetrics;
import io.devhealth.collector.spool.DiskSpool;
import io.devhealth.runtime.security.RecordSigner;
import io.devhealth.schema.Topics;
import io.devhealth.schema.serde.SchemaRegistryClient;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Publishes to Kafka durably: source → {@link SpoolingPublisher} → {@link DiskSpool} →
 * {@link KafkaSpoolSender} → idempotent producer. At least once, per-node order kept, every record
 * keyed by node name and identified by (spool epoch, sequence), on node-events.
 */
public final class KafkaReportPublisher implements ReportPublisher {

    private final DiskSpool spool;
    private final SpoolingPublisher publisher;
    private final KafkaSpoolSender sender;

    private KafkaReportPublisher(DiskSpool spool, SpoolingPublisher publisher, KafkaSpoolSender sender) {
        this.spool = spool;
        this.publisher = publisher;
        this.sender = sender;
    }

    /**
     * Everything a publisher is told: the sender's settings, the spool's, and the Kafka producer's
     * client properties. Built with {@link #builder(String, Topics, Path)}; the collector derives it
     * from its configuration ({@link io.devhealth.collector.CollectorConfig#publisherSettings}).
     *
     * @param clientProperties Kafka producer settings; the delivery guarantees ({@link #producerProperties}) are forced
     */
    public record Settings(KafkaSpoolSender.Settings sender, DiskSpool.Settings spool, Map<String, Object> clientProperties) {

        public Settings {
            Objects.requireNonNull(sender, "sender");
            Objects.requireNonNull(spool, "spool");
            clientProperties = Collections.unmodifiableMap(new HashMap<>(clientProperties));
        }

        /**
         * Settings for node {@code node} spooling in {@code spoolDirectory}, with the defaults of
         * {@link KafkaSpoolSender.Settings#builder} and {@link DiskSpool.Settings#DEFAULT_MAX_BYTES},
         * {@link DiskSpool.Settings#DEFAULT_FSYNC_INTERVAL}, and no client properties.
         */
        public static Builder builder(String node, Topics topics, Path spoolDirectory) {
            return new Builder(node, topics, spoolDirectory);
        }

        public static final class Builder {
            private final KafkaSpoolSender.Settings.Builder sender;
            private final Path spoolDirectory;
            private long spoolMaxBytes = DiskSpool.Settings.DEFAULT_MAX_BYTES;
            private Duration spoolFsyncInterval = DiskSpool.Settings.DEFAULT_FSYNC_INTERVAL;
            private Map<String, Object> clientProperties = Map.of();

            private Builder(String node, Topics topics, Path spoolDirectory) {
                this.sender = KafkaSpoolSender.Settings.builder(node, topics);
                this.spoolDirectory = spoolDirectory;
            }

            public Builder clientProperties(Map<String, Object> properties) {
                this.clientProperties = properties;
                return this;
            }

            public Builder spoolMaxBytes(long bytes) {
                this.spoolMaxBytes = bytes;
                return this;
            }

            public Builder spoolFsyncInterval(Duration interval) {
                this.spoolFsyncInterval = interval;
                return this;
            }

            public Builder maxInFlight(int records) {
                sender.maxInFlight(records);
                return this;
            }

            public Builder closeTimeout(Duration timeout) {
                sender.closeTimeout(timeout);
                return this;
            }

            public Builder signer(Optional<RecordSigner> signer) {
                sender.signer(signer);
                return this;
            }

            public Builder autoRegisterSchemas(boolean register) {
                sender.autoRegisterSchemas(register);
                return this;
            }

            public Settings build() {
                return new Settings(sender.build(), new DiskSpool.Settings(spoolDirectory, spoolMaxBytes, spoolFsyncInterval),
                        clientProperties);
            }
        }
    }

    /** Opens the spool (replaying what an earlier run left) and starts sending. */
    public static KafkaReportPublisher start(Settings settings, SchemaRegistryClient registry, CollectorMetrics metrics, Clock clock) {
        Map<String, Object> props = producerProperties(settings.sender().node(), settings.clientProperties());
        DiskSpool spool = DiskSpool.open(settings.spool(), clock);
        try {
            metrics.bindSpool(spool, clock);
            SpoolCodec codec = new SpoolCodec(spool);
            KafkaSpoolSender sender = new KafkaSpoolSender(settings.sender(), spool, codec, registry,
                    () -> new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer()), metrics, clock);
            sender.start();
            return new KafkaReportPublisher(spool, new SpoolingPublisher(spool, codec, metrics), sender);
        } catch (RuntimeException e) {
            spool.close();
            throw e;
        }
    }

    /** The producer settings; those that make delivery ordered, idempotent and unbounded in time cannot be overridden. */
    static Map<String, Object> producerProperties(String node, Map<String, Object> clientProperties) {
        Map<String, Object> props = new HashMap<>(clientProperties);
        props.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, 5);
        props.putIfAbsent(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        props.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, "devhealth-collector-" + node);
        // send() waits for metadata at most this long; the sender retries, the spool keeps the record.
        props.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, 5_000);
        // The spool holds the backlog, the producer at most spool.send.max.in.flight records: the 32 MiB default
        // buffer would only inflate the heap of a process that should cost the node almost nothing.
        props.putIfAbsent(ProducerConfig.BUFFER_MEMORY_CONFIG, 4L * 1024 * 1024);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        // One request in flight: order per node is the point, and a collector sends a few records a
        // second. With several in flight, a first batch refused as NOT_LEADER on a partition whose leader
        // was just elected let later batches be accepted first; the broker then refused the first one as
        // OUT_OF_ORDER_SEQUENCE forever (seen with Kafka 4.4 on freshly created topics).
        props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
        // Never give up on a record inside the producer: a failed batch could let later ones overtake it.
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Integer.MAX_VALUE);
        props.put(ProducerConfig.RETRIES_CONFIG, Integer.MAX_VALUE);
        return props;
    }

    public DiskSpool spool() {
        return spool;
    }

    public KafkaSpoolSender sender() {
        return sender;
    }

    @Override
    public void publish(SpecificRecord record) {
        publisher.publish(record);
    }

    /** Stops sending (what is unacknowledged stays spooled for the next start) and closes the spool. */
    @Override
    public void close() {
        try {
            sender.close();
        } finally {
            spool.close();
        }
    }
}
