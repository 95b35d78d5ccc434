package io.devhealth.collector.grpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The plugin registration, DRA health and kubelet PodResources servers of {@code src/test/node/server.js},
 * run by Node.js with grpc-js in a child process: a gRPC stack that shares no code with grpc-java.
 *
 * <p>{@link #install()} runs {@code npm ci} into {@code target/grpc-js} from the committed
 * {@code package-lock.json}, and only when that lock file changed since the last install, so a rerun
 * needs no registry. Without {@code node} or {@code npm} it fails and says what to install: the
 * interoperability it tests must not pass by being skipped.
 */
final class GrpcJsServers implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(GrpcJsServers.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Relative to the module directory, the working directory of Maven's test plugins. */
    static final Path SOURCES = Path.of("src/test/node");
    static final Path PROTO_ROOT = Path.of("../schemas/src/main/proto");
    static final Path INSTALL_DIR = Path.of("target/grpc-js");

    private static final Duration INSTALL_TIMEOUT = Duration.ofMinutes(5);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    private static final List<String> FILES = List.of("package.json", "package-lock.json", "server.js");

    private final Process process;
    private final Writer stdin;
    private final List<JsonNode> events = new CopyOnWriteArrayList<>();
    private final List<String> stderr = new CopyOnWriteArrayList<>();

    private GrpcJsServers(Process process) {
        this.process = process;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        pump(process.getInputStream(), "grpc-js-stdout", line -> {
            try {
                events.add(JSON.readTree(line));
            } catch (IOException e) {
                LOGGER.warn("grpc-js server wrote a line that is not JSON line=\"{}\"", line);
            }
        });
        pump(process.getErrorStream(), "grpc-js-stderr", line -> {
            stderr.add(line);
            LOGGER.info("grpc-js server stderr line=\"{}\"", line);
        });
    }

    /**
     * Copies the sources into {@code target/grpc-js} and runs {@code npm ci} there unless the same lock
     * file is installed already.
     *
     * @return the directory to run {@code server.js} in
     */
    static Path install() throws IOException, InterruptedException {
        String nodeVersion = version("node");
        String npmVersion = version("npm");
        Path dir = INSTALL_DIR.toAbsolutePath();
        Files.createDirectories(dir);
        Path installedLock = dir.resolve("node_modules/.installed-package-lock.json");
        boolean upToDate = Files.exists(installedLock)
                && Arrays.equals(Files.readAllBytes(installedLock), Files.readAllBytes(SOURCES.resolve("package-lock.json")));
        for (String file : FILES) {
            Files.copy(SOURCES.resolve(file), dir.resolve(file), StandardCopyOption.REPLACE_EXISTING);
        }
        if (upToDate) {
            LOGGER.info("grpc-js already installed dir={} node={} npm={}", dir, nodeVersion, npmVersion);
            return dir;
        }
        LOGGER.info("installing grpc-js dir={} node={} npm={}", dir, nodeVersion, npmVersion);
        // --prefer-offline: a populated npm cache is enough. --ignore-scripts: nothing here needs an
        // install script (protobufjs' only prints a version warning).
        List<String> output = run(dir, INSTALL_TIMEOUT, "npm", "ci", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund");
        if (!Files.isDirectory(dir.resolve("node_modules/@grpc/grpc-js"))) {
            throw new IllegalStateException("npm ci did not install @grpc/grpc-js in " + dir + ": " + String.join("\n", output));
        }
        Files.copy(dir.resolve("package-lock.json"), installedLock, StandardCopyOption.REPLACE_EXISTING);
        return dir;
    }

    /**
     * Starts {@code server.js} with {@code config} (written as its JSON config file) and waits until it
     * listens on every socket.
     */
    static GrpcJsServers start(Path installDir, Path configFile, Map<String, Object> config) throws IOException, InterruptedException {
        Map<String, Object> withProtos = new HashMap<>(config);
        withProtos.put("protoRoot", PROTO_ROOT.toAbsolutePath().normalize().toString());
        JSON.writeValue(configFile.toFile(), withProtos);
        Process process = new ProcessBuilder("node", "server.js", configFile.toAbsolutePath().toString())
                .directory(installDir.toFile())
                .start();
        GrpcJsServers servers = new GrpcJsServers(process);
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (servers.events("ready").isEmpty()) {
            if (!process.isAlive() || System.nanoTime() > deadline) {
                process.destroyForcibly();
                throw new IllegalStateException("grpc-js server did not start exit=" + (process.isAlive() ? "none" : process.exitValue())
                        + " stderr=" + String.join("\n", servers.stderr));
            }
            Thread.sleep(50);
        }
        LOGGER.info("grpc-js server started pid={} grpcJs={}", process.pid(), servers.events("ready").get(0).path("grpcJs").asText());
        return servers;
    }

    /** Sends a new device snapshot, as {@code [{pool, device, health, message, timeoutSeconds}]}, on every open stream. */
    void report(List<Map<String, Object>> devices) throws IOException {
        stdin.write(JSON.writeValueAsString(Map.of("devices", devices)) + "\n");
        stdin.flush();
    }

    /** The events the server wrote with {@code "event": name}, in order. */
    List<JsonNode> events(String name) {
        return events.stream().filter(e -> name.equals(e.path("event").asText())).toList();
    }

    /** The calls the server handled, as {@code Service/Method}. */
    List<String> calls() {
        return events("call").stream().map(e -> e.path("service").asText() + "/" + e.path("method").asText()).toList();
    }

    /** The {@code :authority} of every call the server handled. */
    List<String> authorities() {
        return events("call").stream().map(e -> e.path("authority").asText()).toList();
    }

    @Override
    public void close() {
        try {
            stdin.close(); // the server stops when its stdin ends
        } catch (IOException e) {
            LOGGER.debug("grpc-js server stdin close failed error=\"{}\"", e.toString());
        }
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private static String version(String command) throws InterruptedException {
        try {
            List<String> output = run(Path.of("."), Duration.ofSeconds(30), command, "--version");
            return output.isEmpty() ? "?" : output.get(output.size() - 1).trim();
        } catch (IOException | IllegalStateException e) {
            throw new IllegalStateException("'" + command + "' is needed by this test (Node.js >= 18 with npm, e.g. "
                    + "'apt-get install nodejs npm'), and '" + command + " --version' failed: " + e.getMessage(), e);
        }
    }

    private static List<String> run(Path dir, Duration timeout, String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        List<String> output = new CopyOnWriteArrayList<>();
        Thread reader = pump(process.getInputStream(), "npm-output", output::add);
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException(String.join(" ", command) + " ran past " + timeout + ": " + String.join("\n", output));
        }
        reader.join(5_000);
        if (process.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed exit=" + process.exitValue() + ": "
                    + String.join("\n", output));
        }
        return new ArrayList<>(output);
    }

    private static Thread pump(InputStream stream, String name, Consumer<String> sink) {
        Thread thread = new Thread(() -> {
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    sink.accept(line);
                }
            } catch (IOException e) {
                LOGGER.debug("child process output ended stream={} error=\"{}\"", name, e.toString());
            }
        }, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }
}
