package io.devhealth.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

/**
 * CPU time spent between two moments, by the whole JVM and by one Kafka Streams application's stream
 * threads. On a shared machine the wall-clock rate
 * of a stage moves with whatever else runs; the CPU a record costs moves much less, so the two are
 * printed side by side.
 */
final class CpuMeter {

    /** CPU nanoseconds used so far, by the JVM and by the selected threads. */
    record Sample(long processNanos, long threadNanos) {
        Sample minus(Sample earlier) {
            return new Sample(processNanos - earlier.processNanos, threadNanos - earlier.threadNanos);
        }
    }

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    /** Linux reports thread CPU in clock ticks of 1/100 s (USER_HZ) on every architecture the JDK runs on. */
    private static final long NANOS_PER_TICK = 10_000_000L;

    private CpuMeter() {}

    /**
     * CPU nanoseconds used so far by every live thread, by name with ids and numbers folded (so that
     * the threads of one kind add up). On Linux from {@code /proc/self/task}, which also shows the
     * JVM's own threads (GC, JIT compiler) and RocksDB's, under their 15-character kernel names;
     * elsewhere only Java threads, the rest under {@code "(not a Java thread)"}.
     */
    static Map<String, Long> byThread() {
        Path tasks = Path.of("/proc/self/task");
        if (Files.isDirectory(tasks)) {
            return byKernelThread(tasks);
        }
        Map<String, Long> byName = new HashMap<>();
        long javaThreads = 0;
        long[] ids = THREADS.getAllThreadIds();
        ThreadInfo[] infos = THREADS.getThreadInfo(ids);
        for (int i = 0; i < ids.length; i++) {
            long cpu = THREADS.getThreadCpuTime(ids[i]);
            if (infos[i] != null && cpu > 0) {
                byName.merge(fold(infos[i].getThreadName()), cpu, Long::sum);
                javaThreads += cpu;
            }
        }
        byName.put("(not a Java thread)", OS.getProcessCpuTime() - javaThreads);
        return byName;
    }

    private static Map<String, Long> byKernelThread(Path tasks) {
        Map<String, Long> byName = new HashMap<>();
        try (Stream<Path> threads = Files.list(tasks)) {
            threads.forEach(task -> {
                try {
                    String stat = Files.readString(task.resolve("stat"));
                    // "pid (comm) state ppid ...": utime and stime are the 12th and 13th fields after the comm.
                    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
                    long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
                    String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                    byName.merge(fold(name), ticks * NANOS_PER_TICK, Long::sum);
                } catch (IOException | RuntimeException e) {
                    // The thread ended between listing and reading: its time is gone from both samples' view.
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return byName;
    }

    private static String fold(String threadName) {
        return threadName.replaceAll("[0-9a-f]{8}-[0-9a-f-]{27}|[0-9]+", "#");
    }

    /** @param applicationId whose stream threads ({@code <application.id>-<uuid>-StreamThread-<n>}) are counted */
    static Sample sample(String applicationId) {
        long threads = 0;
        long[] ids = THREADS.getAllThreadIds();
        ThreadInfo[] infos = THREADS.getThreadInfo(ids);
        for (int i = 0; i < ids.length; i++) {
            if (infos[i] != null && infos[i].getThreadName().startsWith(applicationId + "-")
                    && infos[i].getThreadName().contains("-StreamThread-")) {
                long cpu = THREADS.getThreadCpuTime(ids[i]);
                threads += Math.max(0L, cpu);
            }
        }
        return new Sample(OS.getProcessCpuTime(), threads);
    }
}
