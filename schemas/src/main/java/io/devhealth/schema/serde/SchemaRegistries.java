package io.devhealth.schema.serde;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns a {@code schema.registry.url} into a {@link SchemaRegistryClient}, one instance per URL
 * for the whole JVM.
 *
 * <p>Why JVM-wide: Kafka instantiates serializers and deserializers by reflection, once per
 * producer, consumer and Kafka Streams task. Sharing the client shares its caches, so each schema
 * is registered and fetched once per JVM; and {@code mem://<name>} must resolve to the same
 * in-memory registry in the producer and the consumer of the embedded demo, or the consumer would
 * not know the producer's ids.
 *
 * <ul>
 *   <li>{@code mem://<name>}: an {@link InMemorySchemaRegistry} shared by every caller using that
 *       name. Tests and the embedded demo only: ids are lost when the JVM exits.</li>
 *   <li>{@code http://…} or {@code https://…}: a {@link ConfluentCompatSchemaRegistryClient};
 *       timeouts, credentials and TLS come from {@code config} (keys in {@link RegistryClientConfig}
 *       and {@link RegistryTls}).
 *       Clients are cached by the whole resulting configuration, so the usual case (one URL, one
 *       set of credentials) gives one client per URL.</li>
 * </ul>
 */
public final class SchemaRegistries {

    private static final Logger LOGGER = LoggerFactory.getLogger(SchemaRegistries.class);

    /** URL scheme of the JVM-local in-memory registries. */
    public static final String MEMORY_SCHEME = "mem://";

    private static final Map<String, InMemorySchemaRegistry> IN_MEMORY = new ConcurrentHashMap<>();
    private static final Map<RegistryClientConfig, ConfluentCompatSchemaRegistryClient> REMOTE =
            new ConcurrentHashMap<>();

    private SchemaRegistries() {
    }

    /**
     * The shared client for {@code url}.
     *
     * @throws IllegalArgumentException for another scheme or a malformed setting
     */
    public static SchemaRegistryClient fromUrl(String url, Map<String, ?> config) {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(config, "config");
        String trimmed = url.trim();
        if (trimmed.startsWith(MEMORY_SCHEME)) {
            return inMemory(trimmed.substring(MEMORY_SCHEME.length()));
        }
        if (trimmed.startsWith("http://") || trimmed.startsWith("https://")) {
            RegistryClientConfig clientConfig = RegistryClientConfig.fromMap(trimmed, config);
            return REMOTE.computeIfAbsent(clientConfig, c -> {
                LOGGER.info("Created schema registry client url={} credentials={} tls={}", c.baseUrl(), c.credentials(),
                        c.tls());
                return new ConfluentCompatSchemaRegistryClient(c);
            });
        }
        throw new IllegalArgumentException("Unsupported schema registry URL (expected mem://<name>, http:// or https://): "
                + redactUserInfo(trimmed));
    }

    /** The shared client for {@code url} with default timeouts and no credentials. */
    public static SchemaRegistryClient fromUrl(String url) {
        return fromUrl(url, Map.of());
    }

    /** The JVM-wide in-memory registry called {@code name} ({@code mem://<name>}). */
    public static InMemorySchemaRegistry inMemory(String name) {
        if (name.isEmpty()) {
            throw new IllegalArgumentException("mem:// needs a name, e.g. mem://demo");
        }
        return IN_MEMORY.computeIfAbsent(name, InMemorySchemaRegistry::new);
    }

    private static String redactUserInfo(String url) {
        return url.replaceFirst("//[^/@]*@", "//***@");
    }
}
