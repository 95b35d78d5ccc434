package io.devhealth.schema.serde;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaCompatibility.SchemaCompatibilityType;
import org.apache.avro.SchemaCompatibility.SchemaPairCompatibility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Guards the Kafka topics against breaking schema changes.
 *
 * <p>{@code src/main/avro-history/<Record>/vN.avsc} keeps every released schema of each top-level
 * record. The current generated schema must read all of them (BACKWARD, transitive: compacted
 * topics keep old records for ever) and the latest released version must read the current one
 * (FORWARD: during a rolling upgrade, consumers one release behind read what upgraded producers
 * write). Together: FULL against the latest, BACKWARD against the rest.
 */
class AvroSchemaEvolutionTest {

    static final Path CURRENT_DIR = Paths.get("src/main/avro");
    static final Path HISTORY_DIR = Paths.get("src/main/avro-history");
    static final String GENERATED_PACKAGE = "io.devhealth.schema.avro";
    private static final Pattern VERSION_FILE = Pattern.compile("v(\\d+)\\.avsc");

    /** The topic value types as of this writing; more may come, none may silently disappear. */
    private static final Set<String> KNOWN_TOP_LEVEL = Set.of("NodeEvent", "DeviceHealthReport",
            "NodeHeartbeat", "NodeAllocations", "NodeDevices", "PodDeviceStatus", "HealthTransition", "FleetStats",
            "DeadLetter");

    static Stream<String> topLevelRecords() {
        return currentTopLevel().stream();
    }

    /** Every released schema file, oldest first per record. */
    static Stream<Path> historyFiles() {
        return historyNames().stream().flatMap(name -> versions(name).stream());
    }

    @Test
    void shouldFindEveryKnownTopLevelSchema() {
        assertThat(currentTopLevel()).containsAll(KNOWN_TOP_LEVEL);
    }

    @Test
    void shouldKeepAHistoryEntryForEveryCurrentTopLevelSchema() {
        assertThat(historyNames()).as("folders in %s (add v1.avsc for a new top-level schema)", HISTORY_DIR)
                .containsAll(currentTopLevel());
    }

    @Test
    void shouldHaveACurrentSchemaForEveryHistoryEntry() {
        assertThat(currentTopLevel()).as("top-level .avsc files in %s (a released schema must not vanish)", CURRENT_DIR)
                .containsAll(historyNames());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("topLevelRecords")
    void shouldKeepContiguousVersionsWhoseNameMatchesTheFolder(String name) {
        List<Path> versions = versions(name);

        assertThat(versions).as("versions of %s", name).isNotEmpty();
        for (int i = 0; i < versions.size(); i++) {
            assertThat(versions.get(i).getFileName()).hasToString("v" + (i + 1) + ".avsc");
            assertThat(parse(versions.get(i)).getFullName()).isEqualTo(GENERATED_PACKAGE + "." + name);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("topLevelRecords")
    void shouldReadEveryReleasedVersionWithTheCurrentSchema(String name) {
        Schema current = currentSchema(name);

        for (Path released : versions(name)) {
            assertCompatible(SchemaCompatibility.checkReaderWriterCompatibility(current, parse(released)),
                    "BACKWARD: current " + name + " reading " + released);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("topLevelRecords")
    void shouldBeReadableByTheLatestReleasedVersion(String name) {
        List<Path> versions = versions(name);
        Path latest = versions.get(versions.size() - 1);

        assertCompatible(SchemaCompatibility.checkReaderWriterCompatibility(parse(latest), currentSchema(name)),
                "FORWARD: " + latest + " reading current " + name);
    }

    @Test
    void shouldReportAFieldAddedWithoutDefaultAsBackwardIncompatible() {
        Schema released = parse(versions("DeviceHealthReport").get(0));
        Schema broken = SchemaEdits.edit(released, SchemaEdits.addField("rack", "string", null));
        Schema fixed = SchemaEdits.edit(released, SchemaEdits.addField("rack", "string", TextNode.valueOf("")));

        assertThat(SchemaCompatibility.checkReaderWriterCompatibility(broken, released).getType())
                .isEqualTo(SchemaCompatibilityType.INCOMPATIBLE);
        assertThat(SchemaCompatibility.checkReaderWriterCompatibility(fixed, released).getType())
                .isEqualTo(SchemaCompatibilityType.COMPATIBLE);
    }

    @Test
    void shouldReportARemovedEnumSymbolWithoutDefaultAsIncompatible() {
        Schema released = parse(versions("HealthTransition").get(0));
        Schema narrowed = SchemaEdits.edit(released, tree -> {
            var severity = tree.findParents("symbols").stream()
                    .filter(n -> n.path("name").asText().equals("Severity")).findFirst().orElseThrow();
            ((ArrayNode) severity.get("symbols")).remove(2);
            ((ObjectNode) severity).remove("default");
        });

        assertThat(SchemaCompatibility.checkReaderWriterCompatibility(narrowed, released).getType())
                .isEqualTo(SchemaCompatibilityType.INCOMPATIBLE);
    }

    private static void assertCompatible(SchemaPairCompatibility result, String what) {
        String problems = result.getResult().getIncompatibilities().stream()
                .map(i -> i.getType() + " at " + i.getLocation() + ": " + i.getMessage())
                .collect(Collectors.joining("; "));
        assertThat(result.getType()).as("%s: %s", what, problems).isEqualTo(SchemaCompatibilityType.COMPATIBLE);
    }

    static Schema currentSchema(String name) {
        try {
            return (Schema) Class.forName(GENERATED_PACKAGE + "." + name).getMethod("getClassSchema").invoke(null);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("No generated class for top-level schema " + name, e);
        }
    }

    static Set<String> currentTopLevel() {
        try (Stream<Path> files = Files.list(CURRENT_DIR)) {
            return files.filter(Files::isRegularFile).map(p -> p.getFileName().toString())
                    .filter(f -> f.endsWith(".avsc")).map(f -> f.substring(0, f.length() - ".avsc".length()))
                    .collect(Collectors.toCollection(TreeSet::new));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Set<String> historyNames() {
        try (Stream<Path> dirs = Files.list(HISTORY_DIR)) {
            return dirs.filter(Files::isDirectory).map(p -> p.getFileName().toString())
                    .collect(Collectors.toCollection(TreeSet::new));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<Path> versions(String name) {
        Path dir = HISTORY_DIR.resolve(name);
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> VERSION_FILE.matcher(p.getFileName().toString()).matches())
                    .sorted(Comparator.comparingInt(AvroSchemaEvolutionTest::versionNumber)).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int versionNumber(Path file) {
        Matcher matcher = VERSION_FILE.matcher(file.getFileName().toString());
        if (!matcher.matches()) {
            throw new IllegalArgumentException(file.toString());
        }
        return Integer.parseInt(matcher.group(1));
    }

    static Schema parse(Path file) {
        try {
            return new Schema.Parser().parse(Files.readString(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
