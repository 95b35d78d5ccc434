package io.devhealth.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarFile;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The production image is this module's {@code target/devhealth.jar} and {@code target/lib/} (the
 * Dockerfile copies nothing else). Runs after {@code package} (failsafe), on the artifact itself: no
 * test library, no mock API server, no simulator and no Kafka broker may be in it. The demo and
 * {@code simulate-node} are the demo module's artifact. The image's SBOM is this module's
 * {@code target/bom.json} (CycloneDX): it must name exactly the jars of {@code lib/}, with their hashes.
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

        assertThat(lib).as("target/lib").isNotEmpty().contains("devhealth-stream-processor-0.1.0-SNAPSHOT.jar",
                "devhealth-query-api-0.1.0-SNAPSHOT.jar");
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

    @Test
    void shouldDescribeExactlyTheShippedJarsInTheSbom() throws IOException {
        JsonNode bom = new ObjectMapper().readTree(TARGET.resolve("bom.json").toFile());
        // jar file name as copy-dependencies writes it (artifactId-version[-classifier].jar) → the SBOM's SHA-256
        Map<String, String> described = new TreeMap<>();
        for (JsonNode component : bom.path("components")) {
            String scope = component.path("scope").asText("required");
            if (!scope.equals("required") || !component.path("purl").asText().contains("type=jar")) {
                continue;
            }
            String classifier = purlQualifier(component.path("purl").asText(), "classifier");
            String file = component.path("name").asText() + "-" + component.path("version").asText()
                    + (classifier == null ? "" : "-" + classifier) + ".jar";
            String sha256 = null;
            for (JsonNode hash : component.path("hashes")) {
                if (hash.path("alg").asText().equals("SHA-256")) {
                    sha256 = hash.path("content").asText();
                }
            }
            described.put(file, sha256);
        }
        Map<String, String> shipped = new TreeMap<>();
        try (Stream<Path> jars = Files.list(TARGET.resolve("lib"))) {
            for (Path jar : jars.toList()) {
                shipped.put(jar.getFileName().toString(), sha256(jar));
            }
        }

        assertThat(bom.path("metadata").path("component").path("name").asText()).isEqualTo("devhealth-launcher");
        assertThat(shipped.keySet()).as("jars of lib/ the SBOM does not name").isNotEmpty().isSubsetOf(described.keySet());
        assertThat(described.keySet()).as("SBOM components not in lib/").isSubsetOf(shipped.keySet());
        assertThat(shipped.keySet().stream().filter(jar -> !shipped.get(jar).equals(described.get(jar))))
                .as("jars whose SHA-256 differs from the SBOM's").isEmpty();
    }

    private static String purlQualifier(String purl, String name) {
        int query = purl.indexOf('?');
        if (query < 0) {
            return null;
        }
        for (String pair : purl.substring(query + 1).split("&")) {
            if (pair.startsWith(name + "=")) {
                return pair.substring(name.length() + 1);
            }
        }
        return null;
    }

    private static String sha256(Path file) throws IOException {
        try (InputStream in = new DigestInputStream(Files.newInputStream(file), MessageDigest.getInstance("SHA-256"))) {
            MessageDigest digest = ((DigestInputStream) in).getMessageDigest();
            in.transferTo(java.io.OutputStream.nullOutputStream());
            return HexFormat.of().formatHex(digest.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static boolean banned(String jarName) {
        return BANNED.stream().anyMatch(p -> p.matcher(jarName).matches());
    }
}
