package io.devhealth.schema.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.HealthStatus;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Proves that the serde decodes generated classes without
 * {@code -Dorg.apache.avro.SERIALIZABLE_PACKAGES}. Surefire sets that property for every test JVM
 * (root pom), and Avro reads it once per JVM, so the proof runs {@link AvroTrustProbe} in child JVMs
 * started without it: one showing that plain Avro 1.12.2 refuses (so the check is live and the
 * second result means something), one showing that the serde succeeds.
 */
class AvroTrustTest {

    @Test
    void shouldShowThatPlainAvroRefusesGeneratedClassesWithoutTheProperty() throws Exception {
        String output = runProbe("plain");

        assertThat(output).contains("RESULT forbidden").contains("DeviceHealthReport");
    }

    @Test
    void shouldDecodeThroughTheSerdeWithoutTheProperty() throws Exception {
        String output = runProbe("serde");

        assertThat(output).contains("RESULT decoded");
    }

    @Test
    void shouldTrustTheGeneratedPackageButNotItsLookalikes() {
        AvroTrust.install();

        assertThat(AvroTrust.isTrusted(DeviceHealthReport.class)).isTrue();
        assertThat(AvroTrust.isTrusted(HealthStatus.class)).isTrue();
        assertThat(AvroTrust.isTrusted(org.junit.jupiter.api.Test.class)).isFalse();
        assertThatThrownBy(() -> AvroTrust.trustPackage("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AvroTrust.trustPackage("io.")).isInstanceOf(IllegalArgumentException.class);
    }

    private static String runProbe(String mode) throws IOException, InterruptedException {
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = new ArrayList<>(List.of(
                Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", classpath, AvroTrustProbe.class.getName(), mode));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().remove("JAVA_TOOL_OPTIONS");
        builder.environment().remove("JDK_JAVA_OPTIONS");
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("probe finished").isTrue();
        assertThat(process.exitValue()).as("probe exit code, output:%n%s", output).isZero();
        return output;
    }
}
