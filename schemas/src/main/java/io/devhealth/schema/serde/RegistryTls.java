package io.devhealth.schema.serde;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import javax.net.ssl.SSLContext;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.security.ssl.DefaultSslEngineFactory;

/**
 * TLS settings of the schema registry client: which certificate authorities to trust and, for
 * mutual TLS, which certificate to present.
 *
 * <p>The keys are Kafka's {@code ssl.*} client keys with the prefix {@value #PREFIX}, the names
 * Confluent's serializers use ({@code schema.registry.ssl.truststore.location} …), so a
 * configuration written for them works here. Stores are loaded by Kafka's own
 * {@link DefaultSslEngineFactory}, which reads PKCS12, JKS and PEM files (and PEM given inline),
 * exactly as the Kafka clients of the same service do; nothing here parses a certificate.
 *
 * <p>Without a truststore the JVM's default trust (its {@code cacerts}) applies. The registry's host
 * name is always checked against its certificate: the JDK's HTTP client verifies it on every
 * connection. {@link #toString()} shows which settings are set, never a password or inline key.
 *
 * @param settings the {@code ssl.*} settings given (prefix removed), as typed by Kafka's
 *                 {@link SslConfigs#addClientSslSupport} table; empty when none
 */
public record RegistryTls(Map<String, Object> settings) {

    /** The prefix of every registry TLS key: {@code schema.registry.ssl.truststore.location} etc. */
    public static final String PREFIX = "schema.registry.";

    /** The registry TLS keys that a service declares (the rest of Kafka's {@code ssl.*} keys work too). */
    public static final String TRUSTSTORE_LOCATION_CONFIG = PREFIX + SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG;
    public static final String TRUSTSTORE_TYPE_CONFIG = PREFIX + SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG;
    public static final String TRUSTSTORE_PASSWORD_CONFIG = PREFIX + SslConfigs.SSL_TRUSTSTORE_PASSWORD_CONFIG;
    public static final String KEYSTORE_LOCATION_CONFIG = PREFIX + SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG;
    public static final String KEYSTORE_TYPE_CONFIG = PREFIX + SslConfigs.SSL_KEYSTORE_TYPE_CONFIG;
    public static final String KEYSTORE_PASSWORD_CONFIG = PREFIX + SslConfigs.SSL_KEYSTORE_PASSWORD_CONFIG;
    public static final String KEY_PASSWORD_CONFIG = PREFIX + SslConfigs.SSL_KEY_PASSWORD_CONFIG;

    /** Kafka's default store type ({@code JKS}); PKCS12 and PEM must be named. */
    public static final String DEFAULT_STORE_TYPE = SslConfigs.DEFAULT_SSL_TRUSTSTORE_TYPE;

    private static final ConfigDef SSL_DEFINITION = sslDefinition();

    /** Settings that name key or trust material: one of them makes TLS "configured". */
    private static final Set<String> MATERIAL = Set.of(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG,
            SslConfigs.SSL_TRUSTSTORE_CERTIFICATES_CONFIG, SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG,
            SslConfigs.SSL_KEYSTORE_CERTIFICATE_CHAIN_CONFIG);

    private static final RegistryTls NONE = new RegistryTls(Map.of());

    public RegistryTls {
        settings = Map.copyOf(settings);
    }

    /** No TLS settings: {@code https://} URLs use the JVM's default trust. */
    public static RegistryTls none() {
        return NONE;
    }

    /**
     * Reads every {@code schema.registry.ssl.*} key of a service or Kafka-style configuration map;
     * values may be strings or Kafka {@link Password}s.
     *
     * @throws IllegalArgumentException when a value is malformed (the message names the key, not the value)
     */
    public static RegistryTls fromMap(Map<String, ?> config) {
        Map<String, Object> given = new TreeMap<>();
        config.forEach((key, value) -> {
            if (key.startsWith(PREFIX + "ssl.") && value != null && !value.toString().isBlank()) {
                given.put(key.substring(PREFIX.length()), value);
            }
        });
        if (given.isEmpty()) {
            return NONE;
        }
        Map<String, Object> typed;
        try {
            // Kafka's table types and validates the values (lists, passwords, enums) the factory expects.
            typed = new HashMap<>(new AbstractConfig(SSL_DEFINITION, given, false).values());
        } catch (ConfigException e) {
            throw new IllegalArgumentException("Invalid schema registry TLS setting: " + e.getMessage(), e);
        }
        typed.keySet().retainAll(given.keySet());
        return new RegistryTls(typed);
    }

    /** Whether a truststore or client certificate is configured. */
    public boolean isConfigured() {
        return settings.keySet().stream().anyMatch(MATERIAL::contains);
    }

    /** Whether a client certificate is configured (mutual TLS). */
    public boolean hasClientCertificate() {
        return settings.containsKey(SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG)
                || settings.containsKey(SslConfigs.SSL_KEYSTORE_CERTIFICATE_CHAIN_CONFIG);
    }

    /**
     * A fresh {@link SSLContext} with these stores loaded.
     *
     * @throws IllegalArgumentException when a store cannot be read (wrong path, type or password);
     *                                  the message names the file, never a password
     */
    public SSLContext sslContext() {
        Map<String, Object> all = new HashMap<>(new AbstractConfig(SSL_DEFINITION, settings, false).values());
        DefaultSslEngineFactory factory = new DefaultSslEngineFactory();
        try {
            factory.configure(all);
            return factory.sslContext();
        } catch (KafkaException e) {
            throw new IllegalArgumentException("Cannot load the schema registry's TLS stores ("
                    + describe() + "): " + e.getMessage(), e);
        } finally {
            factory.close();
        }
    }

    private static ConfigDef sslDefinition() {
        ConfigDef definition = new ConfigDef();
        SslConfigs.addClientSslSupport(definition);
        return definition;
    }

    private String describe() {
        Map<String, Object> shown = new TreeMap<>();
        settings.forEach((key, value) -> {
            boolean secret = value instanceof Password || key.equals(SslConfigs.SSL_KEYSTORE_KEY_CONFIG)
                    || key.equals(SslConfigs.SSL_KEYSTORE_CERTIFICATE_CHAIN_CONFIG)
                    || key.equals(SslConfigs.SSL_TRUSTSTORE_CERTIFICATES_CONFIG);
            shown.put(PREFIX + key, secret ? "***" : value);
        });
        return shown.toString();
    }

    /** The keys that are set and the non-secret values (paths, types); passwords and inline PEM as ***. */
    @Override
    public String toString() {
        return settings.isEmpty() ? "none" : describe();
    }
}
