package io.devhealth.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.jar.JarFile;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The production image is this module's {@code target/devhealth.jar} and {@code target/lib/} (the
 * Dockerfile copies nothing else). Runs after {@code package} (failsafe), on the artifact itself: no
 * test library, no mock API server, no simulator and no Kafka broker may be in it. The demo and
 * {@code simulate-node} are the demo module's artifact.
 */
class ProductionArtifactIT {

    private static final Path TARGET = Path.of("target");

    /** Jars that only tests, the simulators or the demo need, by file name as copy-dependencies writes it. */
    private static final List<Pattern> BANNED = Stream.of(
                    "junit-.*", "opentest4j-.*", "assertj-.*", "awaitility-.*",
                    // fabric8's mock API server and its web server; okhttp's MockWebServer
                    "kubernetes-server-mock-.*", "mockwebserver.*", "okhttp.*",
                    // the in-process Kafka broker (the services are clients only)
                    "kafka_2\\.13-.*", "kafka-server-.*",
                    "devhealth-simulators-.*", "devhealth-testkit-.*", "devhealth-demo-.*")
            .map(regex -> Pattern.compile(regex + "\\.jar"))
            .toList();

    @Test
    void shouldShipNoTestLibraryMockServerOrSimulatorInLib() throws IOException {
        List<String> lib;
        try (Stream<Path> jars = Files.list(TARGET.resolve("lib"))) {
            lib = jars.map(p -> p.getFileName().toString()).sorted().toList();
        }

        assertThat(lib).as("target/lib").isNotEmpty().contains("devhealth-stream-processor-0.1.0-SNAPSHOT.jar");
        assertThat(lib).as("target/lib").filteredOn(ProductionArtifactIT::banned).isEmpty();
    }

    @Test
    void shouldPutNoBannedJarOnTheManifestClassPathNorDemoClassesInTheJar() throws IOException {
        try (JarFile jar = new JarFile(TARGET.resolve("devhealth.jar").toFile())) {
            String classPath = jar.getManifest().getMainAttributes().getValue("Class-Path");
            List<String> entries = Arrays.stream(classPath.trim().split("\\s+")).map(e -> e.substring("lib/".length())).toList();

            assertThat(entries).as("Class-Path").isNotEmpty().filteredOn(ProductionArtifactIT::banned).isEmpty();
            assertThat(jar.stream().map(e -> e.getName()))
                    .as("devhealth.jar")
                    .contains("io/devhealth/cli/Devhealth.class")
                    .filteredOn(name -> name.endsWith(".class"))
                    .noneMatch(name -> name.startsWith("io/devhealth/cli/demo/") || name.startsWith("io/devhealth/simulators/"));
        }
    }

    private static boolean banned(String jarName) {
        return BANNED.stream().anyMatch(p -> p.matcher(jarName).matches());
    }
}
