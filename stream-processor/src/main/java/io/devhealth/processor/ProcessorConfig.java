package io.devhealth.processor;

import io.devhealth.schema.Topics;
import io.devhealth.schema.config.ServiceConfig;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;

/** Typed configuration of the stream-processor; every option is also an environment variable ({@link ServiceConfig#envName}). */
public final class ProcessorConfig extends ServiceConfig {

    public static final String BOOTSTRAP_SERVERS = "kafka.bootstrap.servers";
    public static final String SCHEMA_REGISTRY_URL = "schema.registry.url";
    public static final String TOPIC_PREFIX = "topic.prefix";
    public static final String APPLICATION_ID = "application.id";
    public static final String STATE_DIR = "state.dir";
    public static final String PROCESSING_GUARANTEE = "processing.guarantee";
    public static final String COMMIT_INTERVAL = "commit.interval.ms";

    public static final ConfigDef DEFINITION = new ConfigDef()
            .define(BOOTSTRAP_SERVERS, Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new ConfigDef.NonEmptyString(), Importance.HIGH,
                    "Kafka bootstrap servers.")
            .define(SCHEMA_REGISTRY_URL, Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new ConfigDef.NonEmptyString(), Importance.HIGH,
                    "Confluent-compatible schema registry URL; mem://<name> for the embedded demo.")
            .define(TOPIC_PREFIX, Type.STRING, Topics.DEFAULT_PREFIX, Importance.MEDIUM, "Prefix of every topic name.")
            .define(APPLICATION_ID, Type.STRING, "devhealth-processor", new ConfigDef.NonEmptyString(), Importance.HIGH,
                    "Kafka Streams application.id: consumer group, and prefix of internal topics and state directories.")
            .define(STATE_DIR, Type.STRING, "/var/lib/devhealth/state", Importance.HIGH,
                    "Where RocksDB state lives; put it on a persistent volume so restarts do not replay the changelogs.")
            .define(PROCESSING_GUARANTEE, Type.STRING, "exactly_once_v2",
                    ConfigDef.ValidString.in("exactly_once_v2", "at_least_once"), Importance.MEDIUM,
                    "Kafka Streams processing guarantee; exactly_once_v2 so that every transition is emitted once.")
            .define(COMMIT_INTERVAL, Type.LONG, 100L, ConfigDef.Range.atLeast(10), Importance.LOW,
                    "Kafka Streams commit interval; bounds end-to-end latency under exactly_once_v2.");

    public ProcessorConfig(Map<?, ?> values) {
        super(DEFINITION, values);
    }

    public static ProcessorConfig fromEnvironment(Map<String, String> env, Map<String, ?> overrides) {
        return new ProcessorConfig(resolve(DEFINITION, env, overrides));
    }

    public String bootstrapServers() {
        return getString(BOOTSTRAP_SERVERS);
    }

    public String schemaRegistryUrl() {
        return getString(SCHEMA_REGISTRY_URL);
    }

    public Topics topics() {
        return new Topics(getString(TOPIC_PREFIX));
    }

    public String applicationId() {
        return getString(APPLICATION_ID);
    }

    public String stateDir() {
        return getString(STATE_DIR);
    }

    public String processingGuarantee() {
        return getString(PROCESSING_GUARANTEE);
    }

    public long commitIntervalMs() {
        return getLong(COMMIT_INTERVAL);
    }
}
