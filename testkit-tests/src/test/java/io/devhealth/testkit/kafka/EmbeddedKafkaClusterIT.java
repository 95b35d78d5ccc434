package io.devhealth.testkit.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(KafkaClusterExtension.class)
class EmbeddedKafkaClusterIT {

    private static EmbeddedKafkaCluster fromBeforeAll;

    private final EmbeddedKafkaCluster kafka;

    EmbeddedKafkaClusterIT(EmbeddedKafkaCluster kafka) {
        this.kafka = kafka;
    }

    @BeforeAll
    static void rememberCluster(EmbeddedKafkaCluster cluster) {
        fromBeforeAll = cluster;
    }

    @Test
    void shouldInjectOneSharedBroker(EmbeddedKafkaCluster parameter) {
        assertThat(parameter).isSameAs(kafka).isSameAs(fromBeforeAll);
        assertThat(kafka.isRunning()).isTrue();
        assertThat(kafka.bootstrapServers()).matches("127\\.0\\.0\\.1:\\d+");
    }

    @Test
    void shouldCreateTopicsIdempotently() throws Exception {
        String topic = EmbeddedKafkaCluster.uniqueName("topics");

        kafka.createTopics(3, topic);
        kafka.createTopics(3, topic);

        assertThat(kafka.admin().describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS)
                .get(topic).partitions()).hasSize(3);
    }

    @Test
    void shouldCreateCompactedTopics() throws Exception {
        String topic = EmbeddedKafkaCluster.uniqueName("compacted");

        kafka.createCompactedTopics(1, topic);

        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        Config config = kafka.admin().describeConfigs(List.of(resource)).all().get(10, TimeUnit.SECONDS).get(resource);
        assertThat(config.get(TopicConfig.CLEANUP_POLICY_CONFIG).value()).isEqualTo(TopicConfig.CLEANUP_POLICY_COMPACT);
    }

    @Test
    void shouldRoundTripRecords() throws Exception {
        String topic = EmbeddedKafkaCluster.uniqueName("round-trip");
        kafka.createTopics(2, topic);

        try (KafkaProducer<String, String> producer = producer(Map.of())) {
            for (int i = 0; i < 10; i++) {
                producer.send(new ProducerRecord<>(topic, "gpu-" + i, "Healthy")).get(10, TimeUnit.SECONDS);
            }
        }

        List<ConsumerRecord<String, String>> records = consume(topic, "read_uncommitted", 10);
        assertThat(records).hasSize(10).allSatisfy(r -> assertThat(r.value()).isEqualTo("Healthy"));
    }

    @Test
    void shouldCommitATransaction() throws Exception {
        String topic = EmbeddedKafkaCluster.uniqueName("transactions");
        kafka.createTopics(1, topic);

        abortThenCommit(kafka, topic, "aborted", "committed");

        List<ConsumerRecord<String, String>> records = consume(topic, "read_committed", 1);
        assertThat(records).extracting(ConsumerRecord::value).containsExactly("committed");
    }

    /** One transaction aborted with {@code aborted}, then one committed with {@code committed}, on partition 0 of {@code topic}. */
    static void abortThenCommit(EmbeddedKafkaCluster kafka, String topic, String aborted, String committed) {
        try (KafkaProducer<String, String> producer = producer(kafka, Map.of(
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, EmbeddedKafkaCluster.uniqueName("tx")))) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, "gpu-0", aborted));
            // Written to the log before the abort: unflushed, the producer may drop it and nothing is aborted.
            producer.flush();
            producer.abortTransaction();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, "gpu-0", committed));
            producer.commitTransaction();
        }
    }

    private KafkaProducer<String, String> producer(Map<String, Object> overrides) {
        return producer(kafka, overrides);
    }

    /** A String producer with {@code acks=all} and {@code overrides}. */
    static KafkaProducer<String, String> producer(EmbeddedKafkaCluster kafka, Map<String, Object> overrides) {
        Map<String, Object> props = kafka.clientProperties();
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.putAll(overrides);
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    private List<ConsumerRecord<String, String>> consume(String topic, String isolation, int expected) {
        TopicReader.Builder<String, String> builder = TopicReader.of(kafka, topic)
                .deserializers(new StringDeserializer(), new StringDeserializer());
        try (TopicReader<String, String> reader = ("read_committed".equals(isolation) ? builder : builder.readUncommitted()).open()) {
            reader.readAtLeast(expected, Duration.ofSeconds(30));
            // One more short read: nothing beyond what is expected (e.g. an aborted record) may show up.
            return reader.readFor(Duration.ofMillis(200));
        }
    }
}
