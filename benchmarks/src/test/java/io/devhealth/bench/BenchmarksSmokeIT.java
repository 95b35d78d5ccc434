package io.devhealth.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import io.devhealth.testkit.realkube.RealKubernetesExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import picocli.CommandLine;

/**
 * Every benchmark command that docs/PERFORMANCE.md and docs/OBSERVABILITY.md give, run through its
 * own entry point with the documented options at a tiny scale, so that a benchmark cannot rot
 * unnoticed again (PipelineBenchmark once waited forever on pods the sink refused to write). A
 * benchmark fails itself when a phase does not complete (an expected pod, transition or answer not
 * seen); this test asserts that it finished, that it printed its figures, and that it left no thread
 * running. It never asserts a time: these scales measure nothing.
 */
class BenchmarksSmokeIT {

    /**
     * Threads that outlive any one benchmark by design, one per JVM and not the benchmark's to stop: the
     * common pool; the JDK's HTTP client selector, which the query benchmark's client leaves to the
     * garbage collector; a library's static {@code java.lang.ref.Cleaner}; the Kafka broker's Yammer
     * meter ticker (a static pool of Kafka's server metrics); JMH's in-process worker pool; JUnit's own
     * thread that runs each test under its timeout.
     */
    private static final List<String> SHARED_THREADS = List.of("ForkJoinPool.commonPool-", "HttpClient-", "Attach Listener",
            "process reaper", "Cleaner-", "metrics-meter-tick-thread-", "jmh-worker-", "junit-timeout-thread-");

    private final ByteArrayOutputStream printed = new ByteArrayOutputStream();
    private PrintStream originalOut;
    private Set<Thread> threadsBefore;

    @BeforeEach
    void captureOutput() {
        threadsBefore = Thread.getAllStackTraces().keySet();
        originalOut = System.out;
        // Still shown in the test's report: a failure reads with the benchmark's own progress lines.
        System.setOut(new PrintStream(new Tee(originalOut, printed), true, StandardCharsets.UTF_8));
    }

    @AfterEach
    void restoreOutput() {
        System.setOut(originalOut);
    }

    @Test
    void pipelineBenchmarkShowsEveryPodEveryChangeAndTheSilence() {
        int exit = new CommandLine(new PipelineBenchmark()).execute("--nodes", "8", "--devices", "2", "--shards", "2",
                "--keep-alive-seconds", "2", "--quiet-seconds", "1", "--duration-seconds", "2", "--flap-rate", "0.1",
                "--storm-fraction", "0.5", "--silent-nodes", "2", "--initial-timeout-seconds", "60");

        assertThat(exit).as("exit code; the failure is on stderr").isZero();
        assertThat(output()).contains("| initial fan-out", "| end-to-end latency", "| storm: 50% of nodes", "| silence → Unknown",
                "| sink outcomes (its own meters) | ", "0 refused by the identity check");
        assertNoThreadLeft("PipelineBenchmark");
    }

    /**
     * The fleet incident on the real control plane at three hundred pods: every incident and recovery
     * shown on every pod it changed, every pod ending with its devices' last state, the sink's requests
     * per pod change at most 1.25 (one status write from its pod cache, with room for a read while its
     * watch restarts; a read before every write would be 2), and the
     * server's own ceiling measured. This is also the suite's short real-control-plane test of the sink
     * at fleet width: the benchmark fails itself on any of these.
     */
    @Test
    void pipelineBenchmarkOnTheRealApiServerShowsEveryIncidentOnEveryPod() {
        RealKubernetesExtension.binaries();
        // Silence is left to the run above: it is the processor's, whichever API server the sink writes to.
        int exit = new CommandLine(new PipelineBenchmark()).execute("--api-server", "real", "--nodes", "300", "--devices", "2",
                "--shards", "2", "--keep-alive-seconds", "2", "--quiet-seconds", "1", "--duration-seconds", "2", "--flap-rate", "0.04",
                "--silent-nodes", "0", "--incidents", "0.2,1", "--ceiling", "--sink-concurrency", "8", "--max-requests-per-change", "1.25",
                "--initial-timeout-seconds", "120");

        assertThat(exit).as("exit code; the failure is on stderr").isZero();
        assertThat(output()).contains("API server kube-apiserver + etcd", "| incident: one device of 20% of the nodes Unhealthy at once | 60 pods",
                "| incident: every device of 100% of the nodes Unhealthy at once | 300 pods", "| recovery after the 100% incident | 300 pods",
                "| pods ending with their devices' last state | 300 of 300 |", "| pods on which the query API agrees with the API server | 300 of 300 |",
                "| sink ÷ ceiling", "0 refused by the identity check");
        assertNoThreadLeft("PipelineBenchmark --api-server real");
    }

    @Test
    void throughputBenchmarkRunsEveryStage() throws Exception {
        ThroughputBenchmark.main(new String[] {"2000", "400", "1"});

        assertThat(output()).contains("first contact wrote 400 transitions", "| stage | median rec/s",
                "| " + ThroughputBenchmark.STEADY + " |", "| " + ThroughputBenchmark.FLOOR + " |");
        assertNoThreadLeft("ThroughputBenchmark");
    }

    @Test
    void flapStormBenchmarkSeesEveryDevice() throws Exception {
        FlapStormBenchmark.main(new String[] {"16", "10", "1", "1", "0"});

        assertThat(output()).contains("from 16 of 16 devices", "processor lag on node-events");
        assertNoThreadLeft("FlapStormBenchmark");
    }

    /** Section 7's queries and section 8's restores in one run: the restores read what the queried instance wrote. */
    @Test
    void queryBenchmarkAnswersEveryQueryAndRestores() {
        int exit = new CommandLine(new QueryBenchmark()).execute("--devices", "64", "--transitions", "128", "--requests", "70",
                "--warmup", "10", "--threads", "1,2", "--restore");

        assertThat(exit).as("exit code; the failure is on stderr").isZero();
        assertThat(output()).contains("| 1 | **all** | 70 |", "| 2 | **all** | 70 |", "| everything, onto an empty state directory | 1 |",
                "from a standby");
        assertNoThreadLeft("QueryBenchmark");
    }

    @Test
    void scaleOutBenchmarkRunsEveryInstanceCount() {
        int exit = new CommandLine(new ScaleOutBenchmark()).execute("--devices", "64", "--reports", "400", "--instances", "1,2",
                "--partitions", "2", "--runs", "1", "--warmup-runs", "0");

        assertThat(exit).as("exit code; the failure is on stderr").isZero();
        assertThat(output()).contains("| instances | median reports/s", "| 1 | ", "| 2 | ", "Streams pass-through (EOS, 1 instance): median");
        assertNoThreadLeft("ScaleOutBenchmark");
    }

    @Test
    void scrapeCostBenchmarkScrapesProcessorAndCollector() throws Exception {
        ScrapeCostBenchmark.main(new String[] {"80", "8", "2"});

        assertThat(output()).contains("processor (", "collector (", "series");
        assertNoThreadLeft("ScrapeCostBenchmark");
    }

    /** Section 3's command with iterations of a tenth of a second, in this JVM: every hot path runs and gives a score. */
    @Test
    void hotPathBenchmarksScoreEveryMethod() throws Exception {
        // JMH holds a machine-wide lock against concurrent runs; another session's JMH must not fail this one.
        System.setProperty("jmh.ignoreLock", "true");
        Collection<RunResult> results = new Runner(new CommandLineOptions("HotPathBenchmarks", "-wi", "0", "-i", "1", "-r", "100ms",
                "-f", "0", "-foe", "true")).run();

        Set<String> methods = Arrays.stream(HotPathBenchmarks.class.getDeclaredMethods())
                .filter(method -> method.isAnnotationPresent(Benchmark.class))
                .map(method -> HotPathBenchmarks.class.getName() + "." + method.getName()).collect(Collectors.toSet());
        assertThat(results.stream().map(result -> result.getParams().getBenchmark()).collect(Collectors.toSet()))
                .containsExactlyInAnyOrderElementsOf(methods);
        assertThat(results).allSatisfy(result -> assertThat(result.getPrimaryResult().getScore()).isPositive());
    }

    private String output() {
        System.out.flush();
        return printed.toString(StandardCharsets.UTF_8);
    }

    /**
     * No thread the benchmark started is still alive a few seconds after it returned (consumer groups,
     * stream threads, spool senders, API servers all closed): a benchmark that leaks would slow or break
     * every one after it in this JVM.
     */
    private void assertNoThreadLeft(String benchmark) {
        long deadline = System.nanoTime() + 20_000_000_000L;
        Set<Thread> left = leftOver();
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            sleep();
            left = leftOver();
        }
        assertThat(left.stream().map(Thread::getName).sorted().collect(Collectors.toList()))
                .as("threads %s left running", benchmark).isEmpty();
    }

    private Set<Thread> leftOver() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(Thread::isAlive)
                .filter(thread -> !threadsBefore.contains(thread))
                .filter(thread -> SHARED_THREADS.stream().noneMatch(thread.getName()::startsWith))
                .collect(Collectors.toSet());
    }

    private static void sleep() {
        try {
            Thread.sleep(200);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Writes to both streams. */
    private static final class Tee extends OutputStream {
        private final OutputStream first;
        private final OutputStream second;

        Tee(OutputStream first, OutputStream second) {
            this.first = first;
            this.second = second;
        }

        @Override
        public synchronized void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            try {
                first.write(b, off, len);
                second.write(b, off, len);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        @Override
        public synchronized void flush() {
            try {
                first.flush();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    }
}
