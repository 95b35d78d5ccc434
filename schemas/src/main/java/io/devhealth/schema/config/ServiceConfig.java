package io.devhealth.schema.config;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import io.devhealth.schema.Topics;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;

/**
 * Base of every service's typed configuration.
 *
 * <p>Each service declares its options once in a Kafka {@link ConfigDef} (type, default, validator,
 * importance, doc), so validation, {@code --help} and the docs come from one table. Every option can
 * be set by an environment variable whose name is derived from the key: {@code node.name} →
 * {@code DEVHEALTH_NODE_NAME}. Any {@code DEVHEALTH_KAFKA_*} variable also passes through as a
 * {@code kafka.*} client property (security settings, tuning) without being declared here.
 */
public abstract class ServiceConfig extends AbstractConfig {

    public static final String ENV_PREFIX = "DEVHEALTH_";
    /** Where Kafka is; every service has it. */
    public static final String BOOTSTRAP_SERVERS = "kafka.bootstrap.servers";
    /** The Confluent-compatible schema registry; every service has it. */
    public static final String SCHEMA_REGISTRY_URL = "schema.registry.url";
    /** The prefix of every topic name; every service has it. */
    public static final String TOPIC_PREFIX = "topic.prefix";
    /** Client properties under this prefix are handed to the Kafka clients unchanged (prefix removed). */
    public static final String KAFKA_PREFIX = "kafka.";

    protected ServiceConfig(ConfigDef definition, Map<?, ?> originals) {
        // doLog=false: AbstractConfig would log every value, including credentials.
        super(definition, originals, false);
    }

    /** The options every service shares: Kafka, the schema registry and the topic prefix. */
    protected static ConfigDef pipelineOptions() {
        return new ConfigDef()
                .define(BOOTSTRAP_SERVERS, ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new ConfigDef.NonEmptyString(),
                        ConfigDef.Importance.HIGH, "Kafka bootstrap servers.")
                .define(SCHEMA_REGISTRY_URL, ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new ConfigDef.NonEmptyString(),
                        ConfigDef.Importance.HIGH, "Confluent-compatible schema registry URL (e.g. http://apicurio:8080/apis/ccompat/v7); "
                                + "mem://<name> for the embedded demo.")
                .define(TOPIC_PREFIX, ConfigDef.Type.STRING, Topics.DEFAULT_PREFIX, ConfigDef.Importance.MEDIUM, "Prefix of every topic name.");
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

    /** The environment variable that sets {@code key}. */
    public static String envName(String key) {
        return ENV_PREFIX + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }

    /**
     * Collects the options of {@code definition} (and pass-through Kafka properties) from the
     * environment, then applies {@code overrides} (command-line flags, tests) on top.
     */
    public static Map<String, Object> resolve(ConfigDef definition, Map<String, String> env, Map<String, ?> overrides) {
        Map<String, Object> values = new HashMap<>();
        for (String key : definition.names()) {
            String value = env.get(envName(key));
            if (value != null) {
                values.put(key, value);
            }
        }
        String kafkaEnvPrefix = envName(KAFKA_PREFIX);
        env.forEach((name, value) -> {
            if (name.startsWith(kafkaEnvPrefix)) {
                String key = KAFKA_PREFIX + name.substring(kafkaEnvPrefix.length()).toLowerCase(Locale.ROOT).replace('_', '.');
                values.putIfAbsent(key, value);
            }
        });
        values.putAll(overrides);
        return values;
    }

    /** Kafka client properties given as {@code kafka.*}, without the prefix. */
    public Map<String, Object> kafkaClientProperties() {
        return new HashMap<>(originalsWithPrefix(KAFKA_PREFIX, true));
    }

    /** A table of every option, its environment variable and default, for {@code --help} and docs. */
    public static String describe(ConfigDef definition) {
        StringBuilder out = new StringBuilder();
        for (ConfigDef.ConfigKey key : definition.configKeys().values()) {
            out.append(String.format(Locale.ROOT, "  %-40s %-48s default: %s%n      %s%n",
                    key.name, envName(key.name),
                    key.hasDefault() ? String.valueOf(ConfigDef.convertToString(key.defaultValue, key.type)) : "(required)",
                    key.documentation));
        }
        return out.toString();
    }
}
