package io.devhealth.query.access;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import javax.security.auth.x500.X500Principal;
import org.apache.kafka.common.config.types.Password;

/**
 * The one {@link SSLContext} of the query API, from PKCS12 stores: it serves HTTPS with this
 * instance's certificate and, when forwarding to the owning instance, presents the same certificate
 * as a client and trusts peers through the truststore (the JDK's default CAs without one).
 */
public final class TlsContexts {

    public static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

    private TlsContexts() {}

    public static SSLContext create(QuerySecurityConfig security) {
        try {
            KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            char[] keyPassword = chars(security.keystorePassword());
            keys.init(load(security.keystore(), keyPassword), keyPassword);
            TrustManagerFactory trust = null;
            if (security.truststore() != null) {
                trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                trust.init(load(security.truststore(), chars(security.truststorePassword())));
            }
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keys.getKeyManagers(), trust == null ? null : trust.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException | IOException e) {
            // The message names the store and the failure, never its password.
            throw new IllegalStateException("cannot set up TLS for the query API keystore=" + security.keystore() + " truststore="
                    + security.truststore() + ": " + e.getClass().getSimpleName(), e);
        }
    }

    /**
     * The subjects (RFC 2253) of the certificates of the keystore's keys: the identity this instance presents when it
     * forwards, which is every instance's where they share one certificate, as k8s/ deploys them.
     */
    public static List<String> ownSubjects(QuerySecurityConfig security) {
        try {
            KeyStore keystore = load(security.keystore(), chars(security.keystorePassword()));
            List<String> subjects = new ArrayList<>();
            for (String alias : Collections.list(keystore.aliases())) {
                if (keystore.isKeyEntry(alias) && keystore.getCertificate(alias) instanceof X509Certificate certificate) {
                    subjects.add(certificate.getSubjectX500Principal().getName(X500Principal.RFC2253));
                }
            }
            return subjects;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot read the query API keystore=" + security.keystore() + ": "
                    + e.getClass().getSimpleName(), e);
        }
    }

    private static KeyStore load(Path path, char[] password) throws GeneralSecurityException, IOException {
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(path)) {
            store.load(in, password);
        }
        return store;
    }

    private static char[] chars(Password password) {
        return password == null ? new char[0] : password.value().toCharArray();
    }
}
