package io.devhealth.schema.serde;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JavaHomesTest {

    @TempDir
    Path jvms;

    @Test
    void shouldPickTheNewestJdkThatIsNewEnough() throws IOException {
        Path jdk17 = jdk("java-17-openjdk-amd64", "JAVA_VERSION=\"17.0.15\"");
        Path jdk25 = jdk("temurin-25-jdk-amd64", "IMPLEMENTOR=\"Eclipse Adoptium\"\nJAVA_VERSION=\"25.0.3\"");
        Path jdk21 = jdk("jdk-21", "JAVA_VERSION=\"21\"");

        assertThat(JavaHomes.homesUnder(jvms)).startsWith(jdk25, jdk21);
        assertThat(JavaHomes.findJava(21, JavaHomes.homesUnder(jvms))).contains(jdk25.resolve("bin/java"));
        assertThat(JavaHomes.findJava(21, List.of(jdk17, jdk21))).contains(jdk21.resolve("bin/java"));
    }

    @Test
    void shouldFindNothingWhenOnlyOlderJdksOrBrokenHomesExist() throws IOException {
        Path jdk17 = jdk("java-17", "JAVA_VERSION=\"17.0.15\"");
        Path noRelease = Files.createDirectories(jvms.resolve("openjdk-17"));
        Path noJava = Files.createDirectories(jvms.resolve("jre-25"));
        Files.writeString(noJava.resolve("release"), "JAVA_VERSION=\"25\"");

        assertThat(JavaHomes.findJava(21, List.of(jdk17, noRelease, noJava))).isEmpty();
        assertThat(JavaHomes.featureVersion(noRelease)).isZero();
    }

    private Path jdk(String name, String release) throws IOException {
        Path home = Files.createDirectories(jvms.resolve(name));
        Files.writeString(home.resolve("release"), release + "\n");
        Path java = Files.createDirectories(home.resolve("bin")).resolve("java");
        Files.writeString(java, "#!/bin/sh\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        return home;
    }
}
