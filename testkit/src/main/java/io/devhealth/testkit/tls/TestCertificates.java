package io.devhealth.testkit.tls;

import io.devhealth.simulators.kafka.KafkaSecurity;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Self-signed certificates for tests of HTTPS servers and their clients, mTLS included: each key pair
 * in a PKCS12 keystore of its own, valid for 127.0.0.1 and localhost, and one truststore that trusts
 * every one of them, all under one random password. Key pairs are made with the JDK's {@code keytool}
 * (ECDSA P-256, a second or so each): make them once per test class.
 *
 * <pre>{@code
 * TestCertificates tls = TestCertificates.create(dir);
 * Path server = tls.keyPair("server", "CN=localhost");
 * Path client = tls.keyPair("client", "CN=devhealth-client,O=sre");
 * HttpClient mtls = tls.httpClient(client);      // presents the client's certificate, trusts every one here
 * HttpClient anonymous = tls.httpClient(null);   // presents none
 * }</pre>
 */
public final class TestCertificates {

    private static final String STORE_TYPE = "PKCS12";

    private final Path directory;
    private final Path truststore;
    private final String password;

    private TestCertificates(Path directory, String password) {
        this.directory = directory;
        this.truststore = directory.resolve("truststore.p12");
        this.password = password;
    }

    /** No key pair yet; the stores go into {@code directory}. */
    public static TestCertificates create(Path directory) {
        try {
            Files.createDirectories(directory);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new TestCertificates(directory, KafkaSecurity.randomSecret());
    }

    /**
     * A new key pair with a self-signed certificate for {@code subject}, in the keystore {@code <alias>.p12}
     * (returned), its certificate added to {@link #truststore()}.
     */
    public synchronized Path keyPair(String alias, String subject) {
        Path keystore = directory.resolve(alias + ".p12");
        keytool("-genkeypair", "-alias", alias, "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "7", "-dname", subject,
                "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-storetype", STORE_TYPE, "-keystore", keystore.toString(),
                "-storepass", password, "-keypass", password);
        try {
            KeyStore trust = Files.exists(truststore) ? load(truststore) : empty();
            trust.setCertificateEntry(alias, load(keystore).getCertificate(alias));
            try (OutputStream out = Files.newOutputStream(truststore)) {
                trust.store(out, password.toCharArray());
            }
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot add " + alias + " to " + truststore, e);
        }
        return keystore;
    }

    /** Trusts the certificate of every key pair made so far. */
    public Path truststore() {
        return truststore;
    }

    /** The password of every store here and of every key. */
    public String password() {
        return password;
    }

    /** Trusts {@link #truststore()} and presents the certificate of {@code keystore}; null = none. */
    public SSLContext sslContext(Path keystore) {
        try {
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(load(truststore));
            KeyManagerFactory keys = null;
            if (keystore != null) {
                keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                keys.init(load(keystore), password.toCharArray());
            }
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keys == null ? null : keys.getKeyManagers(), trust.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot make a TLS context of " + truststore + " and " + keystore, e);
        }
    }

    /** An HTTP client with {@link #sslContext(Path)}: it presents {@code keystore}'s certificate when asked for one. */
    public HttpClient httpClient(Path keystore) {
        return HttpClient.newBuilder().sslContext(sslContext(keystore)).build();
    }

    private KeyStore load(Path store) throws GeneralSecurityException, IOException {
        KeyStore keyStore = KeyStore.getInstance(STORE_TYPE);
        try (InputStream in = Files.newInputStream(store)) {
            keyStore.load(in, password.toCharArray());
        }
        return keyStore;
    }

    private static KeyStore empty() throws GeneralSecurityException, IOException {
        KeyStore keyStore = KeyStore.getInstance(STORE_TYPE);
        keyStore.load(null, null);
        return keyStore;
    }

    private static void keytool(String... args) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "keytool").toString()));
        command.addAll(List.of(args));
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                // The command line holds the password: name only the operation.
                throw new IllegalStateException("keytool " + args[0] + " failed: " + output.strip());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while keytool ran", e);
        }
    }
}
