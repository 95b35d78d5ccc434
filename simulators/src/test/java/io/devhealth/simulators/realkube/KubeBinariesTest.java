package io.devhealth.simulators.realkube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KubeBinariesTest {

    @Test
    void shouldEndTheBuildAndWhatItRunsWhenTheCallerIsInterrupted(@TempDir Path repository) throws Exception {
        assumeThat(KubeBinaries.goInstalled()).as("the build runs only where Go is installed").isTrue();
        // A build script that, like go build below bash, runs a long child of its own and says which.
        Path script = Files.createDirectories(repository.resolve("scripts/kube")).resolve("build.sh");
        Path childPid = repository.resolve("child.pid");
        Files.writeString(script, "sleep 300 & echo $! > " + childPid + "\nwait\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
        String before = System.getProperty("devhealth.repository.root");
        System.setProperty("devhealth.repository.root", repository.toString());
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread caller = new Thread(() -> {
            try {
                KubeBinaries.ensureBuilt("v1.99.0");
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        try {
            caller.start();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!Files.exists(childPid) || Files.readString(childPid).isBlank()) {
                assertThat(System.nanoTime()).as("the build script started its child").isLessThan(deadline);
                Thread.sleep(50);
            }
            Optional<ProcessHandle> child = ProcessHandle.of(Long.parseLong(Files.readString(childPid).trim()));
            assertThat(child).isPresent();

            caller.interrupt();
            caller.join(Duration.ofSeconds(30).toMillis());

            assertThat(caller.isAlive()).as("the caller returned").isFalse();
            assertThat(failure.get()).isInstanceOf(IllegalStateException.class).hasMessageContaining("interrupted");
            assertThat(child.get().onExit()).as("the build's own child ends with it").succeedsWithin(Duration.ofSeconds(10));
        } finally {
            if (before == null) {
                System.clearProperty("devhealth.repository.root");
            } else {
                System.setProperty("devhealth.repository.root", before);
            }
            if (Files.exists(childPid) && !Files.readString(childPid).isBlank()) {
                ProcessHandle.of(Long.parseLong(Files.readString(childPid).trim())).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
    }
}
