package io.devhealth.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Properties;
import java.util.stream.IntStream;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.Test;

class FirstContactFloorTest {

    private static final String APP = "floor-test";

    @Test
    void shouldWriteTheAskedNumberOfRecordsPerInputRecord() {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, APP);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        try (TopologyTestDriver driver = new TopologyTestDriver(FirstContactFloor.topology("in", "out", 4), props)) {
            TestInputTopic<byte[], byte[]> in = driver.createInputTopic("in", Serdes.ByteArray().serializer(), Serdes.ByteArray().serializer());
            // Two records of one key: each must still be a changelog record of its own in every store.
            in.pipeInput("node-1".getBytes(StandardCharsets.UTF_8), "a".getBytes(StandardCharsets.UTF_8));
            in.pipeInput("node-1".getBytes(StandardCharsets.UTF_8), "b".getBytes(StandardCharsets.UTF_8));

            assertThat(driver.createOutputTopic("out", Serdes.ByteArray().deserializer(), Serdes.ByteArray().deserializer())
                    .readValuesToList()).hasSize(2);
            List<Integer> changelogRecords = IntStream.range(0, 3).mapToObj(store -> driver
                    .createOutputTopic(APP + "-floor-" + store + "-changelog", Serdes.String().deserializer(), Serdes.ByteArray().deserializer())
                    .readKeyValuesToList().size()).toList();
            assertThat(changelogRecords).containsExactly(2, 2, 2);
            assertThat(driver.producedTopicNames()).hasSize(4);
        }
    }

    @Test
    void shouldRefuseFewerThanOneRecord() {
        assertThatThrownBy(() -> FirstContactFloor.topology("in", "out", 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 1");
    }
}
