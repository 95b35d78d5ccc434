package io.devhealth.testkit.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.security.auth.x500.X500Principal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TestCertificatesTest {

    @Test
    void shouldLetAClientOfTheTruststoreAuthenticateByItsCertificate(@TempDir Path dir) throws Exception {
        TestCertificates tls = TestCertificates.create(dir);
        Path server = tls.keyPair("server", "CN=localhost");
        Path client = tls.keyPair("client", "CN=devhealth-client,O=sre");

        try (SSLServerSocket listening = (SSLServerSocket) tls.sslContext(server).getServerSocketFactory()
                .createServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            listening.setNeedClientAuth(true);
            CompletableFuture<X500Principal> seen = CompletableFuture.supplyAsync(() -> {
                try (SSLSocket accepted = (SSLSocket) listening.accept()) {
                    accepted.startHandshake();
                    return (X500Principal) accepted.getSession().getPeerPrincipal();
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            try (SSLSocket socket = (SSLSocket) tls.sslContext(client).getSocketFactory().createSocket("127.0.0.1",
                    listening.getLocalPort())) {
                socket.startHandshake();
                assertThat(socket.getSession().getPeerPrincipal()).isEqualTo(new X500Principal("CN=localhost"));
                // TLS 1.3 sends the client's certificate after the client considers the handshake done: read once.
                socket.getOutputStream().write(0);
                assertThat(seen.get(30, TimeUnit.SECONDS)).isEqualTo(new X500Principal("CN=devhealth-client,O=sre"));
            }
        }
    }

    @Test
    void shouldNameTheOperationNotThePasswordWhenKeytoolFails(@TempDir Path dir) {
        TestCertificates tls = TestCertificates.create(dir);

        assertThatThrownBy(() -> tls.keyPair("broken", "not a distinguished name")).hasMessageContaining("keytool -genkeypair failed")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(tls.password()));
    }
}
