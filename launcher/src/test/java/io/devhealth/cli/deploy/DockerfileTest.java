package io.devhealth.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * There is no Docker engine here, so the image cannot be built in the build: this test reads the
 * Dockerfile and checks what would break it or leak the demo into production: a module the reactor
 * needs but the build stage does not copy, a production stage that is not the default (last) one, or
 * that copies anything but the launcher's jar, lib/ and SBOM (ProductionArtifactIT checks what those
 * hold), and a base image that is not pinned by digest.
 */
class DockerfileTest {

    private static final Path ROOT = Path.of("..");
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
    /** {@code FROM image:tag@sha256:<64 hex> [AS name]}: the tag for the reader, the digest for the build. */
    private static final Pattern PINNED = Pattern.compile("FROM [a-z0-9./-]+:[A-Za-z0-9._-]+@sha256:[0-9a-f]{64}( AS [a-z]+)?");
    private static final Pattern FROM_STAGE = Pattern.compile("FROM ([a-z]+) AS [a-z]+");

    private static List<List<String>> stages() throws IOException {
        List<List<String>> stages = new ArrayList<>();
        for (String line : Files.readAllLines(ROOT.resolve("Dockerfile"))) {
            if (line.startsWith("FROM ")) {
                stages.add(new ArrayList<>());
            }
            if (!stages.isEmpty() && !line.isBlank() && !line.startsWith("#")) {
                stages.get(stages.size() - 1).add(line);
            }
        }
        return stages;
    }

    @Test
    void shouldCopyEveryModuleOfTheReactorIntoTheBuildStage() throws IOException {
        List<String> build = stages().get(0);
        Matcher modules = MODULE.matcher(Files.readString(ROOT.resolve("pom.xml")));
        List<String> missing = new ArrayList<>();
        while (modules.find()) {
            String module = modules.group(1);
            if (build.stream().noneMatch(line -> line.startsWith("COPY " + module + "/"))) {
                missing.add(module);
            }
        }

        assertThat(missing).as("modules the build stage does not copy").isEmpty();
    }

    @Test
    void shouldMakeTheLastStageTheProductionImageOfTheLauncherOnly() throws IOException {
        List<List<String>> stages = stages();
        List<String> production = stages.get(stages.size() - 1);
        List<String> copied = production.stream().filter(line -> line.startsWith("COPY ")).toList();

        assertThat(production.get(0)).endsWith(" AS production");
        assertThat(copied).containsExactly(
                "COPY --from=build /src/launcher/target/devhealth.jar ./devhealth.jar",
                "COPY --from=build /src/launcher/target/lib/ ./lib/",
                "COPY --from=build /src/launcher/target/bom.json ./sbom/devhealth.cdx.json");
        assertThat(production).anyMatch(line -> line.startsWith("ENTRYPOINT ") && line.contains("/opt/devhealth/devhealth.jar"));
        assertThat(stages).anyMatch(stage -> stage.get(0).endsWith(" AS demo"));
    }

    @Test
    void shouldPinEveryBaseImageByDigest() throws IOException {
        List<String> stageNames = new ArrayList<>();
        List<String> unpinned = new ArrayList<>();
        for (List<String> stage : stages()) {
            String from = stage.get(0);
            Matcher ownStage = FROM_STAGE.matcher(from);
            if (ownStage.matches() && stageNames.contains(ownStage.group(1))) {
                // built on an earlier stage of this file, which is pinned itself
            } else if (!PINNED.matcher(from).matches()) {
                unpinned.add(from);
            }
            int as = from.lastIndexOf(" AS ");
            if (as > 0) {
                stageNames.add(from.substring(as + " AS ".length()));
            }
        }

        assertThat(stageNames).as("stages").contains("build", "jre", "production");
        assertThat(unpinned).as("FROM lines not pinned by digest").isEmpty();
    }
}
