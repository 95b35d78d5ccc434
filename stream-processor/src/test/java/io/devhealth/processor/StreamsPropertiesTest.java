package io.devhealth.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

class StreamsPropertiesTest {

    private static Map<String, Object> minimal() {
        return new HashMap<>(Map.of(ProcessorConfig.BOOTSTRAP_SERVERS, "k:9092", ProcessorConfig.SCHEMA_REGISTRY_URL, "mem://p"));
    }

    @Test
    void shouldRunTransactionalStateStoresByDefault() {
        assertThat(StreamProcessorApp.streamsProperties(new ProcessorConfig(minimal())))
                .containsEntry(StreamsConfig.TRANSACTIONAL_STATE_STORES_CONFIG, true)
                .containsEntry(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    }

    @Test
    void shouldLeaveThemOffWhenAsked() {
        Map<String, Object> values = minimal();
        values.put(ProcessorConfig.TRANSACTIONAL_STATE_STORES, "false");

        assertThat(StreamProcessorApp.streamsProperties(new ProcessorConfig(values)))
                .containsEntry(StreamsConfig.TRANSACTIONAL_STATE_STORES_CONFIG, false);
    }

    @Test
    void shouldRunOneStreamThreadByDefaultAndAsManyAsAsked() {
        assertThat(StreamProcessorApp.streamsProperties(new ProcessorConfig(minimal())))
                .containsEntry(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        Map<String, Object> values = minimal();
        values.put(ProcessorConfig.STREAM_THREADS, "2");

        assertThat(StreamProcessorApp.streamsProperties(new ProcessorConfig(values)))
                .containsEntry(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 2);
    }

    @Test
    void shouldRefuseNoStreamThreadNamingTheOption() {
        Map<String, Object> values = minimal();
        values.put(ProcessorConfig.STREAM_THREADS, "0");

        assertThatThrownBy(() -> new ProcessorConfig(values)).isInstanceOf(ConfigException.class)
                .hasMessageContaining(ProcessorConfig.STREAM_THREADS);
    }
}
