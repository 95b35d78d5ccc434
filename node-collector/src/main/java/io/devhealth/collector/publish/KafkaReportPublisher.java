package io.devhealth.collector.publish;

import io.devhealth.collector.ops.CollectorMetrics;
import io.devhealth.collector.spool.DiskSpool;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeDevices;
import io.devhealth.schema.avro.NodeHeartbeat;
import io.devhealth.schema.security.RecordSigner;
import io.devhealth.schema.serde.SchemaRegistryClient;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
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
     * Opens the spool (replaying what an earlier run left) and starts sending.
     *
     * @param clientProperties Kafka producer settings; the delivery guarantees below are forced
     */
    public static KafkaReportPublisher start(String node, Topics topics, Map<String, Object> clientProperties,
                                             SchemaRegistryClient registry, DiskSpool.Settings spoolSettings,
                                             int maxInFlight, CollectorMetrics metrics, Clock clock) {
        return start(node, topics, clientProperties, registry, spoolSettings, maxInFlight, metrics, clock, Optional.empty());
    }

    /**
     * Like {@link #start(String, Topics, Map, SchemaRegistryClient, DiskSpool.Settings, int, CollectorMetrics, Clock)},
     * signing every record with {@code signer} when present ({@link io.devhealth.collector.CollectorConfig#recordSigner()}).
     */
    public static KafkaReportPublisher start(String node, Topics topics, Map<String, Object> clientProperties,
                                             SchemaRegistryClient registry, DiskSpool.Settings spoolSettings,
                                             int maxInFlight, CollectorMetrics metrics, Clock clock, Optional<RecordSigner> signer) {
        Map<String, Object> props = producerProperties(node, clientProperties);
        DiskSpool spool = DiskSpool.open(spoolSettings, clock);
        try {
            metrics.bindSpool(spool, clock);
            SpoolCodec codec = new SpoolCodec(spool);
            KafkaSpoolSender sender = new KafkaSpoolSender(node, topics, spool, codec, registry,
                    () -> new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer()), metrics, clock,
                    maxInFlight, Duration.ofSeconds(5), signer);
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
    public void publish(DeviceHealthReport report) {
        publisher.publish(report);
    }

    @Override
    public void publish(NodeHeartbeat heartbeat) {
        publisher.publish(heartbeat);
    }

    @Override
    public void publish(NodeAllocations allocations) {
        publisher.publish(allocations);
    }

    @Override
    public void publish(NodeDevices devices) {
        publisher.publish(devices);
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
