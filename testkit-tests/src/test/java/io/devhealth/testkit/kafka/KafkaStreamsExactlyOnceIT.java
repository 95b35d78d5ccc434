package io.devhealth.testkit.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

@ExtendWith(KafkaClusterExtension.class)
class KafkaStreamsExactlyOnceIT {

    @TempDir
    Path stateDir;

    @Test
    void shouldRunAnExactlyOnceV2Topology(EmbeddedKafkaCluster kafka) throws Exception {
        String input = EmbeddedKafkaCluster.uniqueName("eos-in");
        String output = EmbeddedKafkaCluster.uniqueName("eos-out");
        kafka.createTopics(2, input, output);
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
                .mapValues(v -> v.toUpperCase(java.util.Locale.ROOT))
                .to(output, Produced.with(Serdes.String(), Serdes.String()));
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, EmbeddedKafkaCluster.uniqueName("eos-app"));
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);

        try (KafkaStreams streams = new KafkaStreams(builder.build(), props)) {
            streams.start();
            try (KafkaProducer<String, String> producer =
                    new KafkaProducer<>(kafka.clientProperties(), new StringSerializer(), new StringSerializer())) {
                producer.send(new ProducerRecord<>(input, "gpu-0", "healthy")).get(10, TimeUnit.SECONDS);
                producer.send(new ProducerRecord<>(input, "gpu-1", "unhealthy")).get(10, TimeUnit.SECONDS);
            }

            assertThat(readCommitted(kafka, output, 2)).containsExactlyInAnyOrder("HEALTHY", "UNHEALTHY");
            streams.close(Duration.ofSeconds(10));
        }
    }

    private static List<String> readCommitted(EmbeddedKafkaCluster kafka, String topic, int expected) {
        try (TopicReader<String, String> reader = TopicReader.of(kafka, topic)
                .deserializers(new StringDeserializer(), new StringDeserializer()).open()) {
            reader.readAtLeast(expected, Duration.ofSeconds(60));
            return reader.values();
        }
    }
}
