package io.devhealth.testkit.kafka;

import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.simulators.kafka.KafkaSecurity;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A broker of the test's own with the listeners a production cluster has, and the security material a
 * test needs to be a client of it: resolved by {@link KafkaClusterExtension} for a parameter of this
 * type. The broker listens on {@code SASL_SSL} (SCRAM-SHA-512) and {@code SSL} (client certificates
 * required) besides the PLAINTEXT listener its own admin client uses; the certificates are
 * {@link KafkaSecurity}'s, made in a temporary directory that {@link #close()} deletes with the broker.
 * {@link BrokerConfig}s on the parameter apply over the security settings.
 *
 * <pre>{@code
 * @BeforeAll
 * static void start(SecuredKafkaCluster secured) {
 *     secured.security().createScramUser(secured.cluster(), "collector", password);
 *     Map<String, Object> client = secured.security().scramClient(secured.cluster(), "collector", password);
 * }
 * }</pre>
 */
public final class SecuredKafkaCluster implements AutoCloseable {

    private final EmbeddedKafkaCluster cluster;
    private final KafkaSecurity security;
    private final Path securityDir;

    private SecuredKafkaCluster(EmbeddedKafkaCluster cluster, KafkaSecurity security, Path securityDir) {
        this.cluster = cluster;
        this.security = security;
        this.securityDir = securityDir;
    }

    /** Makes the certificates, then starts the broker with them and {@code brokerOverrides} over them. */
    static SecuredKafkaCluster start(Map<String, String> brokerOverrides) {
        Path dir;
        try {
            dir = Files.createTempDirectory("devhealth-kafka-tls-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            KafkaSecurity security = KafkaSecurity.create(dir);
            Map<String, String> overrides = new java.util.LinkedHashMap<>(security.brokerOverrides());
            overrides.putAll(brokerOverrides);
            return new SecuredKafkaCluster(EmbeddedKafkaCluster.start(overrides, KafkaSecurity.LISTENERS), security, dir);
        } catch (RuntimeException e) {
            deleteCertificates(dir);
            throw e;
        }
    }

    /** @return the running broker; {@code bootstrapServers(KafkaSecurity.SASL_SSL)} and {@code (SSL)} are the secured listeners */
    public EmbeddedKafkaCluster cluster() {
        return cluster;
    }

    /** @return the certificates and the client and user settings for {@link #cluster()} */
    public KafkaSecurity security() {
        return security;
    }

    /** Stops the broker and deletes its certificates. Idempotent. */
    @Override
    public void close() {
        try {
            cluster.close();
        } finally {
            deleteCertificates(securityDir);
        }
    }

    @Override
    public String toString() {
        return "SecuredKafkaCluster[" + cluster + "]";
    }

    /** The directory holds only the files {@link KafkaSecurity#create} wrote there: no subdirectories. */
    private static void deleteCertificates(Path dir) {
        try (Stream<Path> files = Files.exists(dir) ? Files.list(dir) : Stream.empty()) {
            for (Path file : (Iterable<Path>) files::iterator) {
                Files.deleteIfExists(file);
            }
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + dir, e);
        }
    }
}
