package io.devhealth.processor;

import io.devhealth.schema.serde.SchemaRegistries;
import java.util.Properties;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Runs the {@link DeviceHealthTopology} with Kafka Streams. */
public final class StreamProcessorApp implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(StreamProcessorApp.class);

    private final KafkaStreams streams;

    public StreamProcessorApp(ProcessorConfig config) {
        ProcessorSerdes serdes = ProcessorSerdes.over(SchemaRegistries.fromUrl(config.schemaRegistryUrl(), config.originals()));
        this.streams = new KafkaStreams(DeviceHealthTopology.build(config.topics(), serdes), streamsProperties(config));
    }

    /** Kafka Streams settings; shared with tests so they run what production runs. */
    public static Properties streamsProperties(ProcessorConfig config) {
        Properties props = new Properties();
        props.putAll(config.kafkaClientProperties());
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, config.applicationId());
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
        props.put(StreamsConfig.STATE_DIR_CONFIG, config.stateDir());
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, config.processingGuarantee());
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, config.commitIntervalMs());
        // The 5.0 default, opted into now (and silences the 4.x warning).
        props.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_GLOBAL_ENABLED_CONFIG, true);
        return props;
    }

    public void start() {
        streams.setUncaughtExceptionHandler(error -> {
            LOGGER.error("stream thread failed, replacing it error=\"{}\"", error.toString(), error);
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
        });
        streams.start();
        LOGGER.info("processor started");
    }

    public KafkaStreams streams() {
        return streams;
    }

    @Override
    public void close() {
        streams.close(java.time.Duration.ofSeconds(10));
    }
}
