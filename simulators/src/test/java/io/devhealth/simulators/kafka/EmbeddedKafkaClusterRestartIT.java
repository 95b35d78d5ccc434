package io.devhealth.simulators.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/** A broker of its own: stopping the shared one would break other tests. */
class EmbeddedKafkaClusterRestartIT {

    @Test
    void shouldKeepDataAndPortsAcrossARestart() throws Exception {
        EmbeddedKafkaCluster kafka = EmbeddedKafkaCluster.start(Map.of("log.retention.hours", "1"));
        Path baseDir = kafka.baseDirectory();
        try {
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
            assertThat(readAll(kafka, topic)).containsExactly("before");
        } finally {
            kafka.close();
            kafka.close();
        }
        assertThat(Files.exists(baseDir)).isFalse();
        assertThatThrownBy(kafka::admin).isInstanceOf(IllegalStateException.class);
    }

    private static List<String> readAll(EmbeddedKafkaCluster kafka, String topic) {
        Map<String, Object> props = kafka.clientProperties();
        props.put(ConsumerConfig.GROUP_ID_CONFIG, EmbeddedKafkaCluster.uniqueName("group"));
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer =
                new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (values.isEmpty() && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(r -> values.add(r.value()));
            }
        }
        return values;
    }
}
