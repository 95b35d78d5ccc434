package io.devhealth.testkit.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(KafkaClusterExtension.class)
class TopicReaderIT {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final EmbeddedKafkaCluster kafka;
    private final String topic = EmbeddedKafkaCluster.uniqueName("reader");
    private KafkaProducer<String, String> producer;

    TopicReaderIT(EmbeddedKafkaCluster kafka) {
        this.kafka = kafka;
    }

    @AfterEach
    void closeProducer() {
        if (producer != null) {
            producer.close();
        }
    }

    @Test
    void shouldKeepWhatItReadAcrossPhases() throws Exception {
        kafka.createTopics(2, topic);
        try (TopicReader<String, String> reader = strings(topic).open()) {
            send(topic, "a", "b", "c");
            assertThat(reader.readAtLeast(3, WAIT)).extracting(ConsumerRecord::value).containsExactlyInAnyOrder("a", "b", "c");

            send(topic, "d", "e");
            assertThat(reader.readAtLeast(5, WAIT)).extracting(ConsumerRecord::value).containsExactlyInAnyOrder("a", "b", "c", "d", "e");
            assertThat(reader.readUntil(read -> read.size() == 5, Duration.ZERO)).as("already true: no wait").hasSize(5);
            assertThat(reader.readFor(Duration.ofMillis(500))).as("nothing more arrived").hasSize(5);
            assertThat(reader.values()).containsExactlyInAnyOrderElementsOf(reader.records().stream().map(ConsumerRecord::value).toList());
        }
    }

    @Test
    void shouldFailWithWhatItReadWhenTimeRunsOut() throws Exception {
        kafka.createTopics(1, topic);
        send(topic, "v-0", "v-1", "v-2", "v-3", "v-4", "v-5", "v-6");
        try (TopicReader<String, String> reader = strings(topic).open()) {
            reader.readAtLeast(7, WAIT);

            assertThatThrownBy(() -> reader.readAtLeast(8, Duration.ofMillis(300)))
                    .isInstanceOf(AssertionError.class)
                    .hasMessageContaining("reading [" + topic + "]: condition not met after PT0.3S")
                    .hasMessageContaining("read 7 records, the last 5:")
                    .hasMessageContaining(topic + "-0@6 key=gpu value=v-6")
                    .hasMessageContaining("value=v-2")
                    .message().doesNotContain("value=v-1");
            assertThat(reader.records()).as("what it read stays").hasSize(7);
        }
    }

    @Test
    void shouldReadOnlyCommittedTransactionsUnlessToldOtherwise() throws Exception {
        kafka.createTopics(1, topic);
        EmbeddedKafkaClusterIT.abortThenCommit(kafka, topic, "aborted", "committed");

        try (TopicReader<String, String> committed = strings(topic).open();
             TopicReader<String, String> everything = strings(topic).readUncommitted().open()) {
            assertThat(committed.readToEnd(WAIT)).extracting(ConsumerRecord::value).containsExactly("committed");
            assertThat(everything.readAtLeast(2, WAIT)).extracting(ConsumerRecord::value).containsExactly("aborted", "committed");
        }
    }

    @Test
    void shouldReadToTheEndAsItIsWhenCalled() throws Exception {
        kafka.createTopics(3, topic);
        send(topic, "x", "y", "z");
        try (TopicReader<String, String> reader = strings(topic).open()) {
            assertThat(reader.readToEnd(WAIT)).hasSize(3);
            send(topic, "later");
            assertThat(reader.records()).hasSize(3);
            assertThat(reader.readToEnd(WAIT)).extracting(ConsumerRecord::value).contains("later").hasSize(4);
        }
    }

    @Test
    void shouldReadATopicCreatedAfterItOpenedAndSeveralTopicsAtOnce() throws Exception {
        String other = EmbeddedKafkaCluster.uniqueName("reader-other");
        kafka.createTopics(1, topic);
        try (TopicReader<String, String> reader = strings(topic, other).open()) {
            kafka.createTopics(2, other);
            send(topic, "first");
            send(other, "second");

            assertThat(reader.readAtLeast(2, WAIT)).extracting(ConsumerRecord::topic).containsExactlyInAnyOrder(topic, other);
        }
    }

    private TopicReader.Builder<String, String> strings(String... topics) {
        return TopicReader.of(kafka, topics).deserializers(new StringDeserializer(), new StringDeserializer());
    }

    private void send(String to, String... values) throws Exception {
        if (producer == null) {
            producer = EmbeddedKafkaClusterIT.producer(kafka, Map.of());
        }
        for (String value : values) {
            producer.send(new ProducerRecord<>(to, "gpu", value)).get(10, TimeUnit.SECONDS);
        }
    }
}
