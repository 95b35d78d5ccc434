package io.devhealth.collector;

import io.devhealth.simulators.UniqueNames;
import io.devhealth.simulators.dra.DeviceState;
import io.devhealth.simulators.dra.FakeDraDriver;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.simulators.kubelet.FakeKubelet;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
import io.devhealth.testkit.kafka.OwnBroker;
import io.devhealth.schema.Topics;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Not a test: prints the RSS and CPU of a collector JVM (heap capped at 64 MiB) fed by a fake DRA
 * driver at 8 devices × 1 report/s and at 1,000 reports/s, delivering to an in-process broker. Runs
 * only with {@code -Ddevhealth.bench=true}; the command is in docs/COLLECTOR.md.
 */
@EnabledIfSystemProperty(named = "devhealth.bench", matches = "true")
@ExtendWith(KafkaClusterExtension.class)
class CollectorLoadBenchmarkIT {

    private static final String DRIVER = "gpu.example.com";
    private static final long TICKS_PER_SECOND = 100; // USER_HZ on Linux
    /** The JVM options docs/COLLECTOR.md recommends for the DaemonSet; override with -Ddevhealth.bench.jvm="...". */
    static final String JVM_OPTIONS = "-Xmx32m -XX:MinHeapFreeRatio=10 -XX:MaxHeapFreeRatio=30 -Xss256k -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=24m "
            + "-XX:MaxDirectMemorySize=32m -Dio.grpc.netty.shaded.io.netty.allocator.numDirectArenas=1 "
            + "-Dio.grpc.netty.shaded.io.netty.allocator.numHeapArenas=1";

    @TempDir
    Path tmp;

    @Test
    /** A broker of its own: the collector writes the default topic names. */
    void printRssAndCpuAtTwoLoads(@OwnBroker EmbeddedKafkaCluster kafka) throws Exception {
        Topics topics = Topics.withDefaultPrefix();
        try (FakeDraDriver driver = FakeDraDriver.builder().driverName(DRIVER).serviceSocket(tmp.resolve("dra.sock")).start();
             FakeKubelet kubelet = FakeKubelet.start(tmp.resolve("kubelet.sock"))) {
            kafka.createTopics(1, topics.nodeEvents());
            driver.report(snapshot(0));
            Map<String, String> env = new HashMap<>(System.getenv());
            env.put("DEVHEALTH_NODE_NAME", "bench-node");
            env.put("DEVHEALTH_KAFKA_BOOTSTRAP_SERVERS", kafka.bootstrapServers());
            env.put("DEVHEALTH_SCHEMA_REGISTRY_URL", "mem://" + UniqueNames.uniqueName("bench"));
            env.put("DEVHEALTH_DRA_DRIVERS", DRIVER + "=" + driver.serviceSocket());
            env.put("DEVHEALTH_DRA_DISCOVERY_ENABLED", "false");
            env.put("DEVHEALTH_PODRESOURCES_SOCKET", kubelet.socket().toString());
            env.put("DEVHEALTH_SPOOL_DIR", Files.createDirectories(tmp.resolve("spool")).toString());
            env.put("DEVHEALTH_INVENTORY_ENABLED", "false");
            env.putIfAbsent("MALLOC_ARENA_MAX", "2"); // glibc: RocksDB and gRPC threads would each get a malloc arena
            String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.addAll(List.of(System.getProperty("devhealth.bench.jvm", JVM_OPTIONS).trim().split("\\s+")));
            command.addAll(List.of("-cp", classpath, CollectorProcessMain.class.getName()));
            System.out.printf("BENCH collector JVM options: %s (MALLOC_ARENA_MAX=%s)%n", command.subList(1, command.size() - 3),
                    env.get("MALLOC_ARENA_MAX"));
            ProcessBuilder builder = new ProcessBuilder(command)
                    .redirectErrorStream(true).redirectOutput(tmp.resolve("collector.log").toFile());
            builder.environment().clear();
            builder.environment().putAll(env);
            Process collector = builder.start();
            try {
                driver.awaitStreams(1, Duration.ofSeconds(60));
                measure("8 devices x 1 report/s", collector, driver, 1, Duration.ofSeconds(20), Duration.ofSeconds(60));
                measure("1,000 reports/s (125 snapshots/s of 8 changed devices)", collector, driver, 125,
                        Duration.ofSeconds(10), Duration.ofSeconds(30));
                System.out.printf("BENCH delivered to Kafka: %d node-events records (reports, heartbeats, allocations)%n",
                        count(kafka, topics.nodeEvents()));
                if (command.stream().anyMatch(o -> o.startsWith("-XX:NativeMemoryTracking"))) {
                    Process jcmd = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                            Long.toString(collector.pid()), "VM.native_memory", "summary").redirectErrorStream(true).start();
                    System.out.println("BENCH native memory of the collector JVM:\n" + new String(jcmd.getInputStream().readAllBytes()));
                }
            } finally {
                collector.destroy();
                collector.waitFor(20, TimeUnit.SECONDS);
            }
        }
    }

    private static List<DeviceState> snapshot(long tick) {
        List<DeviceState> devices = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            devices.add(DeviceState.healthy("bench-node", "gpu-" + i).withMessage("tick " + tick));
        }
        return devices;
    }

    private static void measure(String name, Process collector, FakeDraDriver driver, int snapshotsPerSecond, Duration warmUp,
                                Duration window) throws Exception {
        long tick = 1;
        long periodNanos = 1_000_000_000L / snapshotsPerSecond;
        long next = System.nanoTime();
        long warmEnd = next + warmUp.toNanos();
        long end = warmEnd + window.toNanos();
        long cpuStart = -1;
        long maxRss = 0;
        while (System.nanoTime() < end) {
            driver.report(snapshot(tick++));
            if (cpuStart < 0 && System.nanoTime() >= warmEnd) {
                cpuStart = cpuTicks(collector.pid());
            }
            if (cpuStart >= 0) {
                maxRss = Math.max(maxRss, rssKib(collector.pid()));
            }
            next += periodNanos;
            long sleep = next - System.nanoTime();
            if (sleep > 0) {
                TimeUnit.NANOSECONDS.sleep(sleep);
            }
        }
        double cpuSeconds = (cpuTicks(collector.pid()) - cpuStart) / (double) TICKS_PER_SECOND;
        System.out.printf("BENCH %s: CPU %.2f%% of a core over %d s, max RSS %.1f MiB%n", name,
                100 * cpuSeconds / window.toSeconds(), window.toSeconds(), maxRss / 1024.0);
    }

    private static long cpuTicks(long pid) throws Exception {
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[11]) + Long.parseLong(fields[12]); // utime, stime (fields 14, 15 of stat)
    }

    private static long rssKib(long pid) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        return 0;
    }

    private static long count(EmbeddedKafkaCluster kafka, String topic) throws Exception {
        TopicPartition partition = new TopicPartition(topic, 0);
        return kafka.admin().listOffsets(Map.of(partition, OffsetSpec.latest())).partitionResult(partition).get().offset();
    }
}
