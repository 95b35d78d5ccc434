package io.devhealth.schema.serde;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real Apicurio Registry server (the Quarkus fast-jar from
 * {@code io.apicurio:apicurio-registry-app:<version>:tar.gz:all}) run as a child process, with
 * in-memory storage and every listener on 127.0.0.1.
 *
 * <p>Both the HTTP and the management interface get a free loopback port: by default the management
 * interface listens on 0.0.0.0:9000. Readiness is the first 200 from
 * {@code GET /apis/ccompat/v7/subjects}, the API the serde uses.
 */
final class ApicurioServer implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(ApicurioServer.class);

    /**
     * HTTPS with the server key and chain from {@code keystore} (PKCS12), plain HTTP switched off,
     * and every {@code /apis/*} call requiring HTTP basic authentication as {@code user}: Quarkus'
     * embedded users (quarkus-elytron-security-properties-file, which Apicurio 3.3.3 ships) and an
     * HTTP permission policy, so no OIDC server is needed. Client certificates cannot be required:
     * {@code quarkus.http.ssl.client-auth} is fixed to NONE when Apicurio is built.
     */
    record Tls(Path keystore, String keystorePassword, String user, String password) {
    }

    private final Process process;
    private final String scheme;
    private final int port;
    private final Path log;
    private final Duration startup;
    private final Thread shutdownHook;

    private ApicurioServer(Process process, String scheme, int port, Path log, Duration startup, Thread shutdownHook) {
        this.process = process;
        this.scheme = scheme;
        this.port = port;
        this.log = log;
        this.startup = startup;
        this.shutdownHook = shutdownHook;
    }

    /**
     * Starts the server found under {@code home} with {@code java} and waits until it answers.
     *
     * @throws IllegalStateException when it exits early or is not ready within {@code timeout}
     */
    /**
     * The {@code bin/java} to run Apicurio with (it needs Java 21+). Skips the calling test when
     * {@code -Ddevhealth.it.apicurio.skip=true} (as {@code .ci/run} passes without such a JDK); fails
     * it, saying what to do, when no JDK is found without that flag.
     */
    static Path javaOrSkip() {
        Assumptions.assumeFalse(Boolean.getBoolean("devhealth.it.apicurio.skip"),
                "devhealth.it.apicurio.skip=true: Apicurio Registry IT skipped on request");
        return JavaHomes.findJava(21).orElseGet(() -> Assertions.fail("Apicurio Registry 3.3.3 needs Java 21+, and no JDK >= 21 "
                + "was found (looked at $JAVA25_HOME, $JAVA21_HOME and /usr/lib/jvm/*/release). Install one, or pass "
                + "-Ddevhealth.it.apicurio.skip=true to skip this integration test on purpose."));
    }

    static ApicurioServer start(Path java, Path home, Path log, Duration timeout) throws IOException, InterruptedException {
        return start(java, home, log, timeout, null, HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build());
    }

    /**
     * Starts the server over HTTPS with basic authentication (see {@link Tls}); {@code probe} must
     * trust its certificate.
     */
    static ApicurioServer startHttps(Path java, Path home, Path log, Duration timeout, Tls tls, HttpClient probe)
            throws IOException, InterruptedException {
        return start(java, home, log, timeout, Objects.requireNonNull(tls, "tls"), probe);
    }

    private static ApicurioServer start(Path java, Path home, Path log, Duration timeout, Tls tls, HttpClient probe)
            throws IOException, InterruptedException {
        Path runJar = findRunJar(home);
        int port = freePort();
        int managementPort = freePort();
        Path cds = log.resolveSibling("apicurio-cds.jsa");
        List<String> command = new ArrayList<>(List.of(java.toString(),
                "-Xmx512m",
                // A 2-core machine shared with other builds: skip C2 and reuse class data between runs.
                "-XX:TieredStopAtLevel=1",
                "-XX:+AutoCreateSharedArchive", "-XX:SharedArchiveFile=" + cds,
                "-Dquarkus.http.host=127.0.0.1",
                "-Dquarkus.http.port=" + port,
                "-Dquarkus.management.host=127.0.0.1",
                "-Dquarkus.management.port=" + managementPort));
        int apiPort = port;
        ProcessBuilder builder = new ProcessBuilder(command);
        if (tls != null) {
            apiPort = freePort();
            command.addAll(List.of(
                    "-Dquarkus.http.ssl-port=" + apiPort,
                    "-Dquarkus.http.insecure-requests=disabled",
                    "-Dquarkus.http.ssl.certificate.key-store-file=" + tls.keystore(),
                    "-Dquarkus.http.ssl.certificate.key-store-file-type=PKCS12",
                    // Quarkus warns that this is "build time fixed to 'null'", yet without it every
                    // request is refused with 401 (tried): Apicurio leaves it unset at build time.
                    "-Dquarkus.http.auth.basic=true",
                    "-Dquarkus.security.users.embedded.plain-text=true",
                    "-Dquarkus.security.users.embedded.roles." + tls.user() + "=sr-admin",
                    "-Dquarkus.http.auth.permission.registry-api.paths=/apis/*",
                    "-Dquarkus.http.auth.permission.registry-api.policy=authenticated"));
            // Secrets through the environment, so that they are not on the command line (ps).
            builder.environment().put("QUARKUS_HTTP_SSL_CERTIFICATE_KEY_STORE_PASSWORD", tls.keystorePassword());
            builder.environment().put("QUARKUS_SECURITY_USERS_EMBEDDED_USERS_" + tls.user().toUpperCase(Locale.ROOT),
                    tls.password());
        }
        command.addAll(List.of("-jar", runJar.toString()));
        Files.createDirectories(log.getParent());
        long begin = System.nanoTime();
        String scheme = tls == null ? "http" : "https";
        Process process = builder
                .directory(runJar.getParent().toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        Thread hook = new Thread(process::destroyForcibly, "apicurio-it-kill");
        Runtime.getRuntime().addShutdownHook(hook);
        LOGGER.info("Starting Apicurio Registry pid={} scheme={} port={} managementPort={} java={} log={}", process.pid(),
                scheme, apiPort, managementPort, java, log);
        String url = scheme + "://127.0.0.1:" + apiPort + "/apis/ccompat/v7/subjects";
        String authorization = tls == null ? null
                : RegistryCredentials.basic(tls.user(), tls.password()).authorizationHeader().orElseThrow();
        try {
            awaitReady(process, probe, url, authorization, log, timeout);
        } catch (RuntimeException | InterruptedException e) {
            process.destroyForcibly();
            Runtime.getRuntime().removeShutdownHook(hook);
            throw e;
        }
        Duration startup = Duration.ofNanos(System.nanoTime() - begin);
        LOGGER.info("Apicurio Registry ready pid={} startupMs={}", process.pid(), startup.toMillis());
        return new ApicurioServer(process, scheme, apiPort, log, startup, hook);
    }

    /** The Confluent-compatible API root. */
    String ccompatUrl() {
        return scheme + "://127.0.0.1:" + port + "/apis/ccompat/v7";
    }

    /** From process start to the first successful ccompat answer. */
    Duration startupTime() {
        return startup;
    }

    Path log() {
        return log;
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(15, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // JVM already shutting down: the hook runs anyway.
        }
        LOGGER.info("Stopped Apicurio Registry pid={} alive={}", process.pid(), process.isAlive());
    }

    private static void awaitReady(Process process, HttpClient http, String url, String authorization, Path log,
            Duration timeout) throws InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).GET();
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        HttpRequest probe = request.build();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("Apicurio Registry exited with code " + process.exitValue()
                        + " before it was ready; log tail:\n" + tail(log));
            }
            try {
                int status = http.send(probe, HttpResponse.BodyHandlers.discarding()).statusCode();
                if (status == 200) {
                    return;
                }
                if (status == 401 || status == 403) {
                    throw new IllegalStateException("Apicurio Registry refuses the configured user (HTTP " + status
                            + "); log tail:\n" + tail(log));
                }
            } catch (IOException e) {
                // Not listening yet.
            }
            Thread.sleep(250);
        }
        throw new IllegalStateException("Apicurio Registry not ready after " + timeout + "; log tail:\n" + tail(log));
    }

    private static Path findRunJar(Path home) throws IOException {
        if (!Files.isDirectory(home)) {
            throw new IllegalStateException("No Apicurio Registry under " + home
                    + ": run the build through 'verify' so that maven-dependency-plugin unpacks it");
        }
        try (Stream<Path> files = Files.find(home, 3, (p, a) -> p.getFileName().toString().equals("quarkus-run.jar"))) {
            return files.findFirst().orElseThrow(() -> new IllegalStateException("No quarkus-run.jar under " + home));
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    static String tail(Path log) {
        try {
            List<String> lines = new String(Files.readAllBytes(log), StandardCharsets.UTF_8).lines().toList();
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(no log at " + log + ": " + e + ")";
        }
    }
}
