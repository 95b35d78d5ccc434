package io.devhealth.schema.serde;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throw-away certificate authority with a server certificate (127.0.0.1 and localhost) and a
 * client certificate it signed (each key entry holding its chain up to the CA), made with the JDK's {@code keytool} and a random store password.
 *
 * <p>Lives in the schemas tests, not in simulators, because simulators depend on schemas; it follows
 * the simulators' {@code KafkaSecurity} (keytool, PKCS12, random secret), adding a real CA so that a
 * second instance is a "wrong CA".
 *
 * <p>Files in {@code dir}: {@code ca.pem} (the CA certificate), {@code truststore.p12} (the CA),
 * {@code server.p12} and {@code client.p12} (key and chain), all with {@link #password()}.
 */
final class TestCertificates {

    private final Path dir;
    private final String password;

    private TestCertificates(Path dir, String password) {
        this.dir = dir;
        this.password = password;
    }

    /** A CA with a server and a client certificate (11 keytool runs). */
    static TestCertificates create(Path dir) {
        return generate(dir, true);
    }

    /**
     * Only a CA ({@link #caPem()}, {@link #truststore()}; 3 keytool runs): enough to be the wrong
     * authority for a server that {@link #create} signed.
     */
    static TestCertificates authorityOnly(Path dir) {
        return generate(dir, false);
    }

    private static TestCertificates generate(Path dir, boolean withLeaves) {
        byte[] bytes = new byte[18];
        new SecureRandom().nextBytes(bytes);
        TestCertificates certificates = new TestCertificates(dir, Base64.getUrlEncoder().withoutPadding().encodeToString(bytes));
        try {
            Files.createDirectories(dir);
            certificates.generateAuthority();
            if (withLeaves) {
                Path ca = dir.resolve("ca.p12");
                certificates.signed(ca, "server", "CN=localhost", certificates.serverKeystore(),
                        "SAN=ip:127.0.0.1,dns:localhost", "EKU=serverAuth");
                certificates.signed(ca, "client", "CN=devhealth-client", certificates.clientKeystore(), "EKU=clientAuth");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return certificates;
    }

    String password() {
        return password;
    }

    Path caPem() {
        return dir.resolve("ca.pem");
    }

    Path truststore() {
        return dir.resolve("truststore.p12");
    }

    Path serverKeystore() {
        return dir.resolve("server.p12");
    }

    Path clientKeystore() {
        return dir.resolve("client.p12");
    }

    private void generateAuthority() throws IOException {
        Path ca = dir.resolve("ca.p12");
        keytool("-genkeypair", "-alias", "ca", "-keyalg", "RSA", "-keysize", "2048", "-validity", "7",
                "-dname", "CN=devhealth-test-ca", "-ext", "bc:c", "-storetype", "PKCS12", "-keystore", ca.toString(),
                "-storepass", password, "-keypass", password);
        keytool("-exportcert", "-alias", "ca", "-rfc", "-keystore", ca.toString(), "-storepass", password,
                "-file", caPem().toString());
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", caPem().toString(), "-storetype", "PKCS12",
                "-keystore", truststore().toString(), "-storepass", password);
    }

    /** A key pair in {@code keystore} whose certificate the CA signed, stored with its chain. */
    private void signed(Path ca, String alias, String dname, Path keystore, String... extensions) throws IOException {
        keytool("-genkeypair", "-alias", alias, "-keyalg", "RSA", "-keysize", "2048", "-validity", "7", "-dname", dname,
                "-storetype", "PKCS12", "-keystore", keystore.toString(), "-storepass", password, "-keypass", password);
        Path request = dir.resolve(alias + ".csr");
        Path certificate = dir.resolve(alias + ".crt");
        keytool("-certreq", "-alias", alias, "-keystore", keystore.toString(), "-storepass", password,
                "-file", request.toString());
        List<String> sign = new ArrayList<>(List.of("-gencert", "-alias", "ca", "-keystore", ca.toString(),
                "-storepass", password, "-infile", request.toString(), "-outfile", certificate.toString(), "-rfc",
                "-validity", "7"));
        for (String extension : extensions) {
            sign.add("-ext");
            sign.add(extension);
        }
        keytool(sign.toArray(String[]::new));
        // Installed as a whole chain (certificate, then the CA), so that the keystore holds one key
        // entry whose chain a server sends complete; -noprompt accepts the chain's self-signed root.
        Path chain = dir.resolve(alias + "-chain.pem");
        Files.writeString(chain, Files.readString(certificate) + Files.readString(caPem()));
        keytool("-importcert", "-noprompt", "-alias", alias, "-file", chain.toString(), "-keystore", keystore.toString(),
                "-storepass", password);
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
