package io.devhealth.testkit.prometheus;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Prometheus' own checks of rule files: {@code promtool check rules} (syntax, PromQL, templates) and
 * {@code promtool test rules} (unit tests of the rules against synthetic series). Each fails with
 * promtool's output when promtool does.
 */
public final class Promtool {

    private final PrometheusBinaries binaries;

    public Promtool(PrometheusBinaries binaries) {
        this.binaries = binaries;
    }

    /** {@code promtool check rules FILE…}; returns its output. */
    public String checkRules(Path... ruleFiles) {
        return run("check", "rules", ruleFiles);
    }

    /** {@code promtool test rules FILE…} (run from each test file's directory, so its {@code rule_files} resolve); returns its output. */
    public String testRules(Path... testFiles) {
        return run("test", "rules", testFiles);
    }

    private String run(String command, String what, Path... files) {
        List<String> line = new ArrayList<>(List.of(binaries.promtool().toString(), command, what));
        for (Path file : files) {
            line.add(file.toAbsolutePath().toString());
        }
        try {
            Process process = new ProcessBuilder(line)
                    .directory(files.length == 0 ? null : files[0].toAbsolutePath().getParent().toFile())
                    .redirectErrorStream(true)
                    .start();
            // Read to the end first (promtool exits when done); a hung one is ended by the test's own deadline.
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            int code = process.waitFor();
            if (code != 0) {
                throw new AssertionError(String.join(" ", line) + " failed with exit code " + code + ":\n" + output);
            }
            return output;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running promtool", e);
        }
    }
}
