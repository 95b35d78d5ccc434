package io.devhealth.runtime.config;

import io.devhealth.runtime.ops.HttpLimits;
import io.devhealth.schema.Topics;
import io.devhealth.schema.serde.RegistryClientConfig;
import io.devhealth.schema.serde.RegistryTls;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;

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
    /** {@code user:password} for HTTP basic authentication to the schema registry. */
    public static final String SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO = RegistryClientConfig.SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO_CONFIG;
    /** A bearer token for the schema registry. */
    public static final String SCHEMA_REGISTRY_BEARER_AUTH_TOKEN = RegistryClientConfig.SCHEMA_REGISTRY_BEARER_AUTH_TOKEN_CONFIG;
    public static final String SCHEMA_REGISTRY_CONNECT_TIMEOUT_MS = RegistryClientConfig.CONNECT_TIMEOUT_MS_CONFIG;
    public static final String SCHEMA_REGISTRY_REQUEST_TIMEOUT_MS = RegistryClientConfig.REQUEST_TIMEOUT_MS_CONFIG;
    public static final String SCHEMA_REGISTRY_SSL_TRUSTSTORE_LOCATION = RegistryTls.TRUSTSTORE_LOCATION_CONFIG;
    public static final String SCHEMA_REGISTRY_SSL_TRUSTSTORE_TYPE = RegistryTls.TRUSTSTORE_TYPE_CONFIG;
    public static final String SCHEMA_REGISTRY_SSL_TRUSTSTORE_PASSWORD = RegistryTls.TRUSTSTORE_PASSWORD_CONFIG;
    public static final String SCHEMA_REGISTRY_SSL_KEYSTORE_LOCATION = RegistryTls.KEYSTORE_LOCATION_CONFIG;
    public static final String SCHEMA_REGISTRY_SSL_KEYSTORE_TYPE = RegistryTls.KEYSTORE_TYPE_CONFIG;
    public static final String SCHEMA_REGISTRY_SSL_KEYSTORE_PASSWORD = RegistryTls.KEYSTORE_PASSWORD_CONFIG;
    public static final String SCHEMA_REGISTRY_SSL_KEY_PASSWORD = RegistryTls.KEY_PASSWORD_CONFIG;
    /**
     * Whether the serializers register a missing writer schema (Confluent's key). Off, a schema must
     * have been registered ahead ({@code devhealth schemas register}) and the service's registry
     * credentials need only read access.
     */
    public static final String AUTO_REGISTER_SCHEMAS = "auto.register.schemas";
    /** The prefix of every topic name; every service has it. */
    public static final String TOPIC_PREFIX = "topic.prefix";
    /**
     * After a pod's containers finished, how long a device's Unhealthy report still counts for it
     * (drivers often report a failure after the job crashed on it). The processor keeps routing the
     * devices of a pod that left its node for this long, and the sink applies what arrives within it
     * by the containers' {@code finishedAt}: one key, so that one setting
     * ({@code DEVHEALTH_TERMINATION_WINDOW_MS}) gives both the same window.
     */
    public static final String TERMINATION_WINDOW_MS = "termination.window.ms";
    public static final Duration DEFAULT_TERMINATION_WINDOW = Duration.ofMinutes(2);
    public static final String HTTP_REQUEST_TIMEOUT = "http.request.timeout.ms";
    public static final String HTTP_IDLE_TIMEOUT = "http.idle.timeout.ms";
    public static final String HTTP_MAX_CONNECTIONS = "http.max.connections";
    /** Client properties under this prefix are handed to the Kafka clients unchanged (prefix removed). */
    public static final String KAFKA_PREFIX = "kafka.";

    /**
     * A setting a service no longer has, and what to do instead. Kafka's {@link AbstractConfig}
     * ignores keys it does not define and {@link #resolve} reads only the environment variables of
     * defined keys, so without this a removed setting would quietly stop having any effect.
     *
     * @param instead what the service does now and what the user should do, one or two sentences
     */
    public record RemovedOption(String key, String instead) {

        /** The environment variable that used to set it. */
        public String envName() {
            return ServiceConfig.envName(key);
        }

        /** The error a service started with this setting fails with (without the value: it could be a secret). */
        ConfigException error() {
            return new ConfigException(key + " (environment variable " + envName() + ") is no longer a setting: " + instead);
        }
    }

    protected ServiceConfig(ConfigDef definition, Map<?, ?> originals) {
        this(definition, originals, List.of());
    }

    /** @throws ConfigException when {@code originals} sets one of {@code removed} */
    protected ServiceConfig(ConfigDef definition, Map<?, ?> originals, List<RemovedOption> removed) {
        // doLog=false: AbstractConfig would log every value, including credentials.
        super(definition, rejectRemoved(removed, originals), false);
    }

    private static Map<?, ?> rejectRemoved(List<RemovedOption> removed, Map<?, ?> originals) {
        for (RemovedOption option : removed) {
            if (originals.containsKey(option.key())) {
                throw option.error();
            }
        }
        return originals;
    }

    /**
     * The options every service shares: Kafka, the schema registry (URL, timeouts, credentials, TLS)
     * and the topic prefix. The registry options reach the client because every service builds it
     * with {@code SchemaRegistries.fromUrl(schemaRegistryUrl(), originals())}; further Kafka
     * {@code ssl.*} keys under {@code schema.registry.} (e.g. {@code schema.registry.ssl.protocol})
     * work there too without being declared.
     */
    protected static ConfigDef pipelineOptions() {
        return new ConfigDef()
                .define(BOOTSTRAP_SERVERS, ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new ConfigDef.NonEmptyString(),
                        ConfigDef.Importance.HIGH, "Kafka bootstrap servers.")
                .define(SCHEMA_REGISTRY_URL, ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new ConfigDef.NonEmptyString(),
                        ConfigDef.Importance.HIGH, "Confluent-compatible schema registry URL (e.g. http://apicurio:8080/apis/ccompat/v7); "
                                + "mem://<name> for the embedded demo.")
                .define(SCHEMA_REGISTRY_CONNECT_TIMEOUT_MS, ConfigDef.Type.LONG,
                        RegistryClientConfig.DEFAULT_CONNECT_TIMEOUT.toMillis(), ConfigDef.Range.atLeast(1),
                        ConfigDef.Importance.LOW, "Schema registry TCP (and TLS) connect timeout in milliseconds.")
                .define(SCHEMA_REGISTRY_REQUEST_TIMEOUT_MS, ConfigDef.Type.LONG,
                        RegistryClientConfig.DEFAULT_REQUEST_TIMEOUT.toMillis(), ConfigDef.Range.atLeast(1),
                        ConfigDef.Importance.LOW, "Schema registry per-request timeout in milliseconds.")
                .define(SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO, ConfigDef.Type.PASSWORD, null, ConfigDef.Importance.MEDIUM,
                        "Schema registry HTTP basic credentials as user:password; never logged. Unset: no basic auth. "
                                + "Exclusive with " + SCHEMA_REGISTRY_BEARER_AUTH_TOKEN + ".")
                .define(SCHEMA_REGISTRY_BEARER_AUTH_TOKEN, ConfigDef.Type.PASSWORD, null, ConfigDef.Importance.MEDIUM,
                        "Schema registry bearer token (Authorization: Bearer); never logged. Unset: none.")
                .define(SCHEMA_REGISTRY_SSL_TRUSTSTORE_LOCATION, ConfigDef.Type.STRING, null, ConfigDef.Importance.MEDIUM,
                        "File of the certificate authorities that sign the schema registry's certificate (https:// URLs). "
                                + "Unset: the JVM's default trust. The host name is always verified.")
                .define(SCHEMA_REGISTRY_SSL_TRUSTSTORE_TYPE, ConfigDef.Type.STRING, RegistryTls.DEFAULT_STORE_TYPE,
                        ConfigDef.Importance.MEDIUM, "Type of the schema registry truststore: PKCS12, JKS or PEM.")
                .define(SCHEMA_REGISTRY_SSL_TRUSTSTORE_PASSWORD, ConfigDef.Type.PASSWORD, null, ConfigDef.Importance.MEDIUM,
                        "Password of the schema registry truststore (none for PEM); never logged.")
                .define(SCHEMA_REGISTRY_SSL_KEYSTORE_LOCATION, ConfigDef.Type.STRING, null, ConfigDef.Importance.MEDIUM,
                        "File with the client certificate and key for mutual TLS to the schema registry. Unset: no client certificate.")
                .define(SCHEMA_REGISTRY_SSL_KEYSTORE_TYPE, ConfigDef.Type.STRING, RegistryTls.DEFAULT_STORE_TYPE,
                        ConfigDef.Importance.MEDIUM, "Type of the schema registry keystore: PKCS12, JKS or PEM.")
                .define(SCHEMA_REGISTRY_SSL_KEYSTORE_PASSWORD, ConfigDef.Type.PASSWORD, null, ConfigDef.Importance.MEDIUM,
                        "Password of the schema registry keystore; never logged.")
                .define(SCHEMA_REGISTRY_SSL_KEY_PASSWORD, ConfigDef.Type.PASSWORD, null, ConfigDef.Importance.MEDIUM,
                        "Password of the private key in the schema registry keystore (if it differs, or an encrypted PEM key); never logged.")
                .define(AUTO_REGISTER_SCHEMAS, ConfigDef.Type.BOOLEAN, true, ConfigDef.Importance.MEDIUM,
                        "Register the writer schema of a topic when the registry lacks it. false: only look it up (schemas "
                                + "registered ahead with `devhealth schemas register`), so the registry credentials can be read-only.")
                .define(TOPIC_PREFIX, ConfigDef.Type.STRING, Topics.DEFAULT_PREFIX, ConfigDef.Importance.MEDIUM, "Prefix of every topic name.")
                .define(HTTP_REQUEST_TIMEOUT, ConfigDef.Type.LONG, HttpLimits.DEFAULT_REQUEST_TIMEOUT.toMillis(), ConfigDef.Range.atLeast(100),
                        ConfigDef.Importance.LOW, "Milliseconds within which a request's line and headers must arrive at the service's "
                                + "HTTP endpoint (the query API, /metrics and the probes), counted from the connection's opening "
                                + "for its first request; a connection that takes longer is closed (a slowloris sends a byte at a time).")
                .define(HTTP_IDLE_TIMEOUT, ConfigDef.Type.LONG, HttpLimits.DEFAULT_IDLE_TIMEOUT.toMillis(), ConfigDef.Range.atLeast(100),
                        ConfigDef.Importance.LOW, "Milliseconds an HTTP connection may move no byte, reading a request, writing a "
                                + "response to a client that stopped reading, or between requests, before it is closed.")
                .define(HTTP_MAX_CONNECTIONS, ConfigDef.Type.INT, HttpLimits.DEFAULT_MAX_CONNECTIONS, ConfigDef.Range.atLeast(1),
                        ConfigDef.Importance.LOW, "HTTP connections the service holds at once; beyond them it accepts no more until one closes.");
    }

    /** The limits of this service's HTTP endpoint ({@value #HTTP_REQUEST_TIMEOUT}, {@value #HTTP_IDLE_TIMEOUT}, {@value #HTTP_MAX_CONNECTIONS}). */
    public HttpLimits httpLimits() {
        return new HttpLimits(Duration.ofMillis(getLong(HTTP_REQUEST_TIMEOUT)), Duration.ofMillis(getLong(HTTP_IDLE_TIMEOUT)),
                getInt(HTTP_MAX_CONNECTIONS));
    }

    public String bootstrapServers() {
        return getString(BOOTSTRAP_SERVERS);
    }

    public String schemaRegistryUrl() {
        return getString(SCHEMA_REGISTRY_URL);
    }

    /** {@value #AUTO_REGISTER_SCHEMAS}. */
    public boolean autoRegisterSchemas() {
        return getBoolean(AUTO_REGISTER_SCHEMAS);
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
        return resolve(definition, List.of(), env, overrides);
    }

    /**
     * Like {@link #resolve(ConfigDef, Map, Map)}, also taking the {@code removed} settings that are
     * set, so that the service's constructor rejects them instead of ignoring them.
     */
    public static Map<String, Object> resolve(ConfigDef definition, List<RemovedOption> removed, Map<String, String> env,
                                              Map<String, ?> overrides) {
        Map<String, Object> values = new HashMap<>();
        for (RemovedOption option : removed) {
            String value = env.get(option.envName());
            if (value != null) {
                values.put(option.key(), value);
            }
        }
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
