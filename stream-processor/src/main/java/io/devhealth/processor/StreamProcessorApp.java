package io.devhealth.processor;

import io.devhealth.schema.serde.SchemaRegistries;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Runs the {@link DeviceHealthTopology} with Kafka Streams, and the query API next to it. */
public final class StreamProcessorApp implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(StreamProcessorApp.class);

    private final PrometheusMeterRegistry meters = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final KafkaStreams streams;
    private final KafkaStreamsMetrics streamsMetrics;

    public StreamProcessorApp(ProcessorConfig config) {
        ProcessorSerdes serdes = ProcessorSerdes.over(SchemaRegistries.fromUrl(config.schemaRegistryUrl(), config.originals()));
        Properties props = streamsProperties(config);
        DeadLetterHandler.configure(props, config.topics().deadLetters(), serdes.deadLetters().serializer(), meters);
        this.streams = new KafkaStreams(DeviceHealthTopology.build(config.topics(), serdes, config.topologyOptions(meters)), props);
        this.streamsMetrics = new KafkaStreamsMetrics(streams);
        streamsMetrics.bindTo(meters);
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
        props.put(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, BoundedMemoryRocksDbConfig.class.getName());
        RocksDbMemoryBudget memory = config.rocksDbMemory();
        props.put(BoundedMemoryRocksDbConfig.TOTAL_BYTES_CONFIG, Long.toString(memory.totalBytes()));
        props.put(BoundedMemoryRocksDbConfig.MEMTABLE_RATIO_CONFIG, Double.toString(memory.memtableRatio()));
        return props;
    }

    public void start() {
        streams.setUncaughtExceptionHandler(error -> {
            LOGGER.error("stream thread failed, replacing it error=\"{}\"", error.toString(), error);
            return StreamThreadExceptionResponse.REPLACE_THREAD;
        });
        streams.start();
        LOGGER.info("processor started");
    }

    public KafkaStreams streams() {
        return streams;
    }

    public PrometheusMeterRegistry meters() {
        return meters;
    }

    @Override
    public void close() {
        streams.close(Duration.ofSeconds(10));
        streamsMetrics.close();
        meters.close();
    }
}
