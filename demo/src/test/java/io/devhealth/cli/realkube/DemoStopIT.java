package io.devhealth.cli.realkube;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.cli.demo.DemoCommand;
import io.devhealth.simulators.realkube.KubeBinaries;
import io.devhealth.simulators.realkube.Mounts;
import io.devhealth.testkit.realkube.RealKubernetesExtension;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code devhealth demo --real-kubernetes --keep-running} as a user runs it (the packaged jar, in a JVM
 * of its own), stopped with SIGTERM: every process it started ends with it, and the kubelet's mounts go
 * (story 4's pods mount no volume; RealNodeMountsIT covers those).
 *
 * <p>The signal comes while story 4 runs, with the whole real cluster up and its Job's pod running.
 * Stopping there and stopping at the {@code --keep-running} prompt are one path: the shutdown hook
 * interrupts the demo's thread, which leaves its wait (the prompt's or a story step's) and closes what
 * it opened on its way out; so one case covers both, and it ends minutes earlier than the prompt would.
 */
@Tag("real-kubernetes")
@ExtendWith(RealKubernetesExtension.class)
class DemoStopIT {

    private static final Duration STORY_TIMEOUT = Duration.ofMinutes(6);
    /** Printed by story 4 once its Job's pod runs on the real node. */
    private static final String POD_RUNS = "(its claim, allocated by the scheduler)";
    private static final Pattern WORK_DIR = Pattern.compile("\\(logs in (\\S+)/kube-logs\\)");
    private static final List<String> COMPONENTS = List.of("etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager",
            "kubelet", "devhealth-fake-cri", "devhealth-dra-driver");

    @Test
    void shouldEndEveryProcessItStartedAndUnmountTheKubeletsVolumesOnSigterm(KubeBinaries binaries, @TempDir Path tmp)
            throws Exception {
        Path jar = Path.of("target", "devhealth-demo.jar").toAbsolutePath();
        assertThat(jar).as("the demo jar the package phase builds").isRegularFile();
        Path output = tmp.resolve("demo.out");
        Process demo = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Ddevhealth.repository.root=" + KubeBinaries.repositoryRoot(), "-Ddevhealth.kube.version=" + binaries.version(),
                "-jar", jar.toString(), "demo", "--real-kubernetes", "--keep-running", "--nodes", "2", "--gpus", "1")
                .redirectErrorStream(true).redirectOutput(output.toFile()).start();
        List<ProcessHandle> started = new ArrayList<>();
        Path workDir = null;
        try {
            long deadline = System.nanoTime() + STORY_TIMEOUT.toNanos();
            while (!read(output).contains(POD_RUNS)) {
                assertThat(demo.isAlive()).as("the demo runs until its story 4 pod does; it printed:%n%s", read(output)).isTrue();
                assertThat(System.nanoTime()).as("story 4's pod running within %s; the demo printed:%n%s", STORY_TIMEOUT, read(output))
                        .isLessThan(deadline);
                Thread.sleep(500);
            }
            started.addAll(demo.descendants().toList());
            assertThat(started.stream().map(DemoStopIT::command).toList()).as("what the demo runs below it").containsAll(COMPONENTS);
            Matcher logs = WORK_DIR.matcher(read(output));
            assertThat(logs.find()).as("the demo says where its real cluster's files are").isTrue();
            workDir = Path.of(logs.group(1));
            assertThat(Mounts.under(workDir)).as("the kubelet's root is mounted onto itself").contains(workDir.resolve("real-node/kubelet"));

            demo.destroy();

            assertThat(demo.waitFor(DemoCommand.STOP_GRACE.plusSeconds(30).toSeconds(), TimeUnit.SECONDS))
                    .as("the demo exits within its stop grace").isTrue();
            assertThat(started.stream().filter(ProcessHandle::isAlive).map(DemoStopIT::command).toList())
                    .as("processes the demo started that outlived it").isEmpty();
            assertThat(Mounts.under(workDir)).as("mounts left under the demo's directory").isEmpty();
            assertThat(read(output)).as("it closed everything itself, without the last-resort kill")
                    .contains("Stopped: everything the demo started is closed.").doesNotContain("killing the");
        } finally {
            System.out.print(read(output));
            demo.destroyForcibly();
            started.forEach(ProcessHandle::destroyForcibly);
            // A mount of a process that still exits is busy: unmount once they are gone.
            for (ProcessHandle process : started) {
                try {
                    process.onExit().get(10, TimeUnit.SECONDS);
                } catch (ExecutionException | TimeoutException e) {
                    System.err.println("DemoStopIT: " + command(process) + " still runs after SIGKILL: " + e);
                }
            }
            if (workDir != null) {
                Mounts.unmountAll(workDir);
            }
        }
    }

    private static String command(ProcessHandle process) {
        return process.info().command().map(c -> Path.of(c).getFileName().toString()).orElse("pid " + process.pid());
    }

    private static String read(Path file) {
        try {
            // Leniently: a component's bytes need not be UTF-8.
            return Files.exists(file) ? new String(Files.readAllBytes(file), StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
