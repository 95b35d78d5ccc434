package io.devhealth.testkit.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** A broker of its own: stopping the shared one would break other tests. */
@ExtendWith(KafkaClusterExtension.class)
class EmbeddedKafkaClusterRestartIT {

    @Test
    void shouldKeepDataAndPortsAcrossARestart(@BrokerConfig(name = "log.retention.hours", value = "1") EmbeddedKafkaCluster kafka)
            throws Exception {
        Path baseDir = kafka.baseDirectory();
        String bootstrap = kafka.bootstrapServers();
        String topic = EmbeddedKafkaCluster.uniqueName("restart");
        kafka.createTopics(1, topic);
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(kafka.clientProperties(), new StringSerializer(), new StringSerializer())) {
            producer.send(new ProducerRecord<>(topic, "gpu-0", "before")).get(10, TimeUnit.SECONDS);
        }

        kafka.stopBroker();
        assertThat(kafka.isRunning()).isFalse();
        kafka.restartBroker();

        assertThat(kafka.isRunning()).isTrue();
        assertThat(kafka.bootstrapServers()).isEqualTo(bootstrap);
        try (TopicReader<String, String> reader = TopicReader.of(kafka, topic).readUncommitted()
                .deserializers(new StringDeserializer(), new StringDeserializer()).open()) {
            assertThat(reader.readAtLeast(1, Duration.ofSeconds(30))).extracting(r -> r.value()).containsExactly("before");
        }

        // Closing is idempotent: the extension closes this broker again after the test.
        kafka.close();
        kafka.close();
        assertThat(Files.exists(baseDir)).isFalse();
        assertThatThrownBy(kafka::admin).isInstanceOf(IllegalStateException.class);
    }
}
