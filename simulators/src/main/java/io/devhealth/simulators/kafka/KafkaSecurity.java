package io.devhealth.simulators.kafka;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;

/**
 * TLS and SASL/SCRAM for the in-process broker, so that clients are tested against the listeners a
 * production cluster has: {@code SASL_SSL} with SCRAM-SHA-512, and {@code SSL} with client
 * certificates required (mTLS). Certificates are self-signed, made with the JDK's {@code keytool},
 * valid for 127.0.0.1 and localhost, with random store passwords.
 *
 * <pre>{@code
 * KafkaSecurity security = KafkaSecurity.create(tempDir);
 * EmbeddedKafkaCluster kafka = EmbeddedKafkaCluster.start(security.brokerOverrides(), KafkaSecurity.LISTENERS);
 * security.createScramUser(kafka, "collector", password);
 * Map<String, Object> client = security.scramClient(kafka, "collector", password);
 * }</pre>
 *
 * <p>Tests get such a broker, and this object, as a {@code SecuredKafkaCluster} parameter from the testkit's
 * {@code KafkaClusterExtension}.
 */
public final class KafkaSecurity {

    public static final String SASL_SSL = "SASL_SSL";
    public static final String SSL = "SSL";
    /** The extra listeners to start the cluster with. */
    public static final List<String> LISTENERS = List.of(SASL_SSL, SSL);

    private static final String MECHANISM = "SCRAM-SHA-512";
    private static final String STORE_TYPE = "PKCS12";

    private final Path brokerKeystore;
    private final Path clientKeystore;
    private final Path truststore;
    private final String storePassword;

    private KafkaSecurity(Path dir, String storePassword) {
        this.brokerKeystore = dir.resolve("broker.p12");
        this.clientKeystore = dir.resolve("client.p12");
        this.truststore = dir.resolve("truststore.p12");
        this.storePassword = storePassword;
    }

    /** Generates a broker and a client key pair and a truststore that trusts both, in {@code dir}. */
    public static KafkaSecurity create(Path dir) {
        KafkaSecurity security = new KafkaSecurity(dir, randomSecret());
        try {
            Files.createDirectories(dir);
            security.keyPair("broker", "CN=localhost", security.brokerKeystore);
            security.keyPair("client", "CN=devhealth-client", security.clientKeystore);
            security.trust("broker", security.brokerKeystore, dir.resolve("broker.crt"));
            security.trust("client", security.clientKeystore, dir.resolve("client.crt"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return security;
    }

    /** A random secret suitable as a password in tests. */
    public static String randomSecret() {
        byte[] bytes = new byte[18];
        new SecureRandom().nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** Broker settings for {@link #LISTENERS}: TLS everywhere, SCRAM on SASL_SSL, client certificates required on SSL. */
    public Map<String, String> brokerOverrides() {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("ssl.keystore.type", STORE_TYPE);
        p.put("ssl.keystore.location", brokerKeystore.toString());
        p.put("ssl.keystore.password", storePassword);
        p.put("ssl.key.password", storePassword);
        p.put("ssl.truststore.type", STORE_TYPE);
        p.put("ssl.truststore.location", truststore.toString());
        p.put("ssl.truststore.password", storePassword);
        p.put("listener.name.ssl.ssl.client.auth", "required");
        p.put("sasl.enabled.mechanisms", MECHANISM);
        p.put("listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required;");
        return p;
    }

    /** Creates (or updates) a SCRAM-SHA-512 user through the cluster's PLAINTEXT admin client. */
    public void createScramUser(EmbeddedKafkaCluster kafka, String user, String password) {
        try {
            kafka.admin().alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(user,
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), password))).all().get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot create SCRAM user " + user, e);
        }
    }

    /** Client settings for SASL_SSL with SCRAM-SHA-512 as {@code user}. */
    public Map<String, Object> scramClient(EmbeddedKafkaCluster kafka, String user, String password) {
        Map<String, Object> p = trustOnly();
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(SASL_SSL));
        p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, SASL_SSL);
        p.put(SaslConfigs.SASL_MECHANISM, MECHANISM);
        p.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
                + user + "\" password=\"" + password + "\";");
        return p;
    }

    /** Client settings for SSL with the client certificate (mTLS). */
    public Map<String, Object> mtlsClient(EmbeddedKafkaCluster kafka) {
        Map<String, Object> p = trustOnly();
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(SSL));
        p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, SSL);
        p.put(SslConfigs.SSL_KEYSTORE_TYPE_CONFIG, STORE_TYPE);
        p.put(SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG, clientKeystore.toString());
        p.put(SslConfigs.SSL_KEYSTORE_PASSWORD_CONFIG, storePassword);
        p.put(SslConfigs.SSL_KEY_PASSWORD_CONFIG, storePassword);
        return p;
    }

    /** The secrets these settings contain, for tests that check logs never show them. */
    public List<String> secrets() {
        return List.of(storePassword);
    }

    private Map<String, Object> trustOnly() {
        Map<String, Object> p = new HashMap<>();
        p.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, STORE_TYPE);
        p.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, truststore.toString());
        p.put(SslConfigs.SSL_TRUSTSTORE_PASSWORD_CONFIG, storePassword);
        return p;
    }

    private void keyPair(String alias, String dname, Path keystore) throws IOException {
        keytool("-genkeypair", "-alias", alias, "-keyalg", "RSA", "-keysize", "2048", "-validity", "7", "-dname", dname,
                "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-storetype", STORE_TYPE, "-keystore", keystore.toString(),
                "-storepass", storePassword, "-keypass", storePassword);
    }

    private void trust(String alias, Path keystore, Path certificate) throws IOException {
        keytool("-exportcert", "-alias", alias, "-rfc", "-keystore", keystore.toString(), "-storepass", storePassword,
                "-file", certificate.toString());
        keytool("-importcert", "-noprompt", "-alias", alias, "-file", certificate.toString(), "-storetype", STORE_TYPE,
                "-keystore", truststore.toString(), "-storepass", storePassword);
    }

    private static void keytool(String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        try {
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                // The command line holds the store password: report only the operation.
                throw new IOException("keytool " + args[0] + " failed: " + output.strip());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }
}
