package io.devhealth.processor.internals.stores;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.util.Properties;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.Test;

/**
 * The processor reaches into Kafka Streams' internal API in one file, {@link CommitHookKeyValueStore}. Internal
 * API changes without notice between versions, so an upgrade of Kafka fails here until that file has been read
 * against the new version (and {@link CommitHookKeyValueStore#CHECKED_AGAINST_KAFKA} moved to it); the tests of
 * pod statuses per commit ({@code PodStatusPerCommitTest}) and of the node store then show whether it still works.
 */
class KafkaStreamsInternalsTest {

    @Test
    void shouldRunOnTheKafkaStreamsVersionTheInternalApiAdapterWasCheckedAgainst() throws Exception {
        // Every Kafka artifact is pinned to one version (the root pom); kafka-clients carries it in this resource.
        Properties version = new Properties();
        try (InputStream in = KafkaStreams.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            version.load(in);
        }
        assertThat(version.getProperty("version"))
                .as("Kafka on the classpath; read CommitHookKeyValueStore against it, then move CHECKED_AGAINST_KAFKA")
                .isEqualTo(CommitHookKeyValueStore.CHECKED_AGAINST_KAFKA);
    }
}
