package io.devhealth.collector.publish;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.collector.spool.DiskSpool;
import io.devhealth.collector.spool.SpoolEntry;
import io.devhealth.schema.avro.DeviceHealthReport;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A collector killed with SIGKILL loses nothing it had accepted into its spool (separate JVM). */
class SpoolKillIT {

    @TempDir
    Path tmp;

    @Test
    void shouldKeepEveryAcceptedRecordWhenTheCollectorIsKilled() throws Exception {
        Path dir = tmp.resolve("spool");
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m", "-cp", classpath, SpoolWriterMain.class.getName(), dir.toString())
                .redirectErrorStream(true)
                .start();
        TreeSet<Long> accepted = new TreeSet<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while ((line = out.readLine()) != null) {
                if (line.startsWith("accepted ")) {
                    accepted.add(Long.parseLong(line.substring("accepted ".length())));
                    if (accepted.size() == 2_000) {
                        // SIGKILL: no shutdown hook, no close, no fsync. (It also closes our end of the pipe:
                        // lines the child printed after this one are not read, which only makes the check weaker.)
                        child.destroyForcibly();
                        break;
                    }
                }
                if (System.nanoTime() > deadline) {
                    child.destroyForcibly();
                    break;
                }
            }
        } finally {
            child.destroyForcibly();
            child.waitFor(30, TimeUnit.SECONDS);
        }
        assertThat(child.exitValue()).isEqualTo(137);
        assertThat(accepted.size()).isGreaterThanOrEqualTo(2_000);

        try (DiskSpool spool = DiskSpool.open(new DiskSpool.Settings(dir, 64L * 1024 * 1024, Duration.ofSeconds(1)),
                Clock.systemUTC())) {
            SpoolCodec codec = new SpoolCodec(spool);
            List<Long> spooled = new ArrayList<>();
            List<SpoolEntry> batch;
            while (!(batch = spool.nextForSend(10_000)).isEmpty()) {
                for (SpoolEntry entry : batch) {
                    DeviceHealthReport report = (DeviceHealthReport) codec.decode(entry.type(), entry.payload());
                    assertThat(report.getSequence()).isEqualTo(entry.sequence());
                    assertThat(report.getCollectorEpoch()).isEqualTo(spool.epoch());
                    spooled.add(entry.sequence());
                }
            }
            assertThat(spooled).containsAll(accepted);
            assertThat(spooled).isSorted();
            assertThat(spooled.get(0)).isEqualTo(1L);
            // Sequences continue after the crash: nothing accepted is ever re-numbered.
            assertThat(spool.lastSequence()).isGreaterThanOrEqualTo(accepted.last());
        }
    }
}
