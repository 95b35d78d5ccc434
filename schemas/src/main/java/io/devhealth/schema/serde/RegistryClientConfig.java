package io.devhealth.schema.serde;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.common.config.types.Password;

/**
 * Settings of a {@link ConfluentCompatSchemaRegistryClient}: where the registry is, how long to
 * wait for it, and how to authenticate.
 *
 * <p>The configuration keys reuse Confluent's names where Confluent has one, so that a Kafka client
 * configuration written for Confluent's serializer works unchanged. Values may be strings (from a
 * properties file) or numbers.
 *
 * <p>{@link #toString()} never shows a secret (see {@link RegistryCredentials}).
 *
 * @param baseUrl        the registry's Confluent-compatible API root, e.g.
 *                       {@code http://127.0.0.1:8080/apis/ccompat/v7} for Apicurio
 * @param connectTimeout how long to wait for a TCP connection
 * @param requestTimeout how long to wait for each answer
 * @param credentials    how to authenticate
 * @param tls            which certificate authorities to trust and which client certificate to present
 *                       (only for {@code https://})
 */
public record RegistryClientConfig(URI baseUrl, Duration connectTimeout, Duration requestTimeout,
        RegistryCredentials credentials, RegistryTls tls) {

    /** {@code user:password} for HTTP basic authentication (Confluent's key). */
    public static final String BASIC_AUTH_USER_INFO_CONFIG = "basic.auth.user.info";

    /**
     * The same as {@link #BASIC_AUTH_USER_INFO_CONFIG} under the {@code schema.registry.} prefix
     * (Confluent's serializer key, and the option every devhealth service declares). Wins when both are set.
     */
    public static final String SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO_CONFIG = "schema.registry." + BASIC_AUTH_USER_INFO_CONFIG;

    /** A bearer token, sent as {@code Authorization: Bearer <token>} (Confluent's key). */
    public static final String BEARER_AUTH_TOKEN_CONFIG = "bearer.auth.token";

    /** The same as {@link #BEARER_AUTH_TOKEN_CONFIG} under the {@code schema.registry.} prefix. Wins when both are set. */
    public static final String SCHEMA_REGISTRY_BEARER_AUTH_TOKEN_CONFIG = "schema.registry." + BEARER_AUTH_TOKEN_CONFIG;

    /** Connect timeout in milliseconds; default {@link #DEFAULT_CONNECT_TIMEOUT}. */
    public static final String CONNECT_TIMEOUT_MS_CONFIG = "schema.registry.connect.timeout.ms";

    /** Per-request timeout in milliseconds; default {@link #DEFAULT_REQUEST_TIMEOUT}. */
    public static final String REQUEST_TIMEOUT_MS_CONFIG = "schema.registry.request.timeout.ms";

    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(5);
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(10);

    public RegistryClientConfig {
        Objects.requireNonNull(baseUrl, "baseUrl");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(requestTimeout, "requestTimeout");
        Objects.requireNonNull(credentials, "credentials");
        Objects.requireNonNull(tls, "tls");
        String scheme = baseUrl.getScheme();
        if (!"http".equals(scheme) && !"https".equals(scheme)) {
            throw new IllegalArgumentException("Schema registry URL must be http or https, got scheme " + scheme);
        }
        if (baseUrl.getRawUserInfo() != null) {
            // Do not echo the URL: it holds the secret.
            throw new IllegalArgumentException("Schema registry URL must not carry credentials; set "
                    + BASIC_AUTH_USER_INFO_CONFIG + " instead");
        }
        if (connectTimeout.isNegative() || connectTimeout.isZero() || requestTimeout.isNegative()
                || requestTimeout.isZero()) {
            throw new IllegalArgumentException("Schema registry timeouts must be positive");
        }
        if (tls.isConfigured() && !"https".equals(scheme)) {
            // A truststore next to an http:// URL is a mistake that would send credentials in clear text.
            throw new IllegalArgumentException("Schema registry TLS settings (schema.registry.ssl.*) are set but the URL "
                    + baseUrl + " is not https://");
        }
    }

    /** A configuration with default timeouts, no authentication and no TLS settings. */
    public static RegistryClientConfig of(String baseUrl) {
        return builder(baseUrl).build();
    }

    /**
     * Starts from {@link #DEFAULT_CONNECT_TIMEOUT}, {@link #DEFAULT_REQUEST_TIMEOUT}, no credentials and
     * no TLS settings (an {@code https://} URL is then verified against the JVM's default trust).
     */
    public static Builder builder(String baseUrl) {
        return new Builder(URI.create(baseUrl));
    }

    public static final class Builder {
        private final URI baseUrl;
        private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
        private RegistryCredentials credentials = RegistryCredentials.none();
        private RegistryTls tls = RegistryTls.none();

        private Builder(URI baseUrl) {
            this.baseUrl = baseUrl;
        }

        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = timeout;
            return this;
        }

        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = timeout;
            return this;
        }

        public Builder credentials(RegistryCredentials registryCredentials) {
            this.credentials = registryCredentials;
            return this;
        }

        public Builder tls(RegistryTls registryTls) {
            this.tls = registryTls;
            return this;
        }

        /** @throws IllegalArgumentException as the record's constructor does */
        public RegistryClientConfig build() {
            return new RegistryClientConfig(baseUrl, connectTimeout, requestTimeout, credentials, tls);
        }
    }

    /**
     * Reads timeouts, credentials and TLS settings ({@link RegistryTls}) from a Kafka-style
     * configuration map; absent keys keep defaults.
     *
     * @throws IllegalArgumentException when both basic and bearer credentials are set, or a value is malformed
     */
    public static RegistryClientConfig fromMap(String baseUrl, Map<String, ?> config) {
        return builder(baseUrl)
                .connectTimeout(millis(config, CONNECT_TIMEOUT_MS_CONFIG, DEFAULT_CONNECT_TIMEOUT))
                .requestTimeout(millis(config, REQUEST_TIMEOUT_MS_CONFIG, DEFAULT_REQUEST_TIMEOUT))
                .credentials(credentials(config))
                .tls(RegistryTls.fromMap(config))
                .build();
    }

    private static RegistryCredentials credentials(Map<String, ?> config) {
        String userInfo = firstOf(config, SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO_CONFIG, BASIC_AUTH_USER_INFO_CONFIG);
        String token = firstOf(config, SCHEMA_REGISTRY_BEARER_AUTH_TOKEN_CONFIG, BEARER_AUTH_TOKEN_CONFIG);
        if (userInfo != null && token != null) {
            // One Authorization header: sending both would leave the choice to the server.
            throw new IllegalArgumentException("Set only one of " + SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO_CONFIG + " and "
                    + SCHEMA_REGISTRY_BEARER_AUTH_TOKEN_CONFIG);
        }
        if (token != null) {
            return RegistryCredentials.bearer(token);
        }
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            if (colon < 0) {
                throw new IllegalArgumentException(BASIC_AUTH_USER_INFO_CONFIG + " must have the form user:password");
            }
            return RegistryCredentials.basic(userInfo.substring(0, colon), userInfo.substring(colon + 1));
        }
        return RegistryCredentials.none();
    }

    private static String firstOf(Map<String, ?> config, String preferred, String alias) {
        String value = string(config, preferred);
        return value != null ? value : string(config, alias);
    }

    private static Duration millis(Map<String, ?> config, String key, Duration fallback) {
        Object value = config.get(key);
        if (value == null) {
            return fallback;
        }
        try {
            long ms = value instanceof Number n ? n.longValue() : Long.parseLong(value.toString().trim());
            return Duration.ofMillis(ms);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be a number of milliseconds, got " + value, e);
        }
    }

    private static String string(Map<String, ?> config, String key) {
        Object value = config.get(key);
        if (value == null) {
            return null;
        }
        // Kafka's ConfigDef turns PASSWORD settings into Password, whose toString() is "[hidden]".
        String text = value instanceof Password password ? password.value() : value.toString();
        return text.isBlank() ? null : text;
    }
}
