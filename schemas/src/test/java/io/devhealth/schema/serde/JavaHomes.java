package io.devhealth.schema.serde;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Finds a JDK of at least a given feature version on this machine. The Apicurio Registry server is
 * Java 21 bytecode while the project builds and tests on Java 17, so the IT must look for a newer JDK
 * to run it: first {@code $JAVA25_HOME} and {@code $JAVA21_HOME}, then every {@code /usr/lib/jvm/*}
 * whose {@code release} file says {@code JAVA_VERSION >= minimum}, newest first.
 */
final class JavaHomes {

    private static final Pattern JAVA_VERSION = Pattern.compile("^JAVA_VERSION=\"?(\\d+)", Pattern.MULTILINE);

    private JavaHomes() {
    }

    /** The {@code bin/java} of a JDK on this machine whose feature version is at least {@code minimum}. */
    static Optional<Path> findJava(int minimum) {
        List<Path> candidates = new ArrayList<>();
        for (String variable : List.of("JAVA25_HOME", "JAVA21_HOME")) {
            String home = System.getenv(variable);
            if (home != null && !home.isBlank()) {
                candidates.add(Paths.get(home));
            }
        }
        candidates.addAll(homesUnder(Paths.get("/usr/lib/jvm")));
        return findJava(minimum, candidates);
    }

    /** The first of {@code homes} (JDK home directories) that is new enough and has {@code bin/java}. */
    static Optional<Path> findJava(int minimum, List<Path> homes) {
        return homes.stream()
                .filter(home -> featureVersion(home) >= minimum)
                .map(home -> home.resolve("bin").resolve("java"))
                .filter(Files::isExecutable)
                .findFirst();
    }

    /** The directories under {@code root}, newest feature version first. */
    static List<Path> homesUnder(Path root) {
        if (!Files.isDirectory(root)) {
            return List.of();
        }
        try (Stream<Path> homes = Files.list(root)) {
            return homes.sorted(Comparator.comparingInt(JavaHomes::featureVersion).reversed()).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The feature version in {@code <home>/release}, or 0 when there is none. */
    static int featureVersion(Path home) {
        Path release = home.resolve("release");
        if (!Files.isRegularFile(release)) {
            return 0;
        }
        try {
            Matcher matcher = JAVA_VERSION.matcher(Files.readString(release));
            return matcher.find() ? Integer.parseInt(matcher.group(1)) : 0;
        } catch (IOException e) {
            return 0;
        }
    }
}
