package io.devhealth.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.Map;

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

    private CpuMeter() {}

    /**
     * CPU nanoseconds used so far by every live Java thread, by name with ids and numbers folded (so
     * that the threads of one kind add up); what the JVM used besides them (GC, JIT, RocksDB's own
     * threads) is under {@code "(not a Java thread)"}.
     */
    static Map<String, Long> byThread() {
        Map<String, Long> byName = new HashMap<>();
        long javaThreads = 0;
        long[] ids = THREADS.getAllThreadIds();
        ThreadInfo[] infos = THREADS.getThreadInfo(ids);
        for (int i = 0; i < ids.length; i++) {
            long cpu = THREADS.getThreadCpuTime(ids[i]);
            if (infos[i] != null && cpu > 0) {
                byName.merge(infos[i].getThreadName().replaceAll("[0-9a-f]{8}-[0-9a-f-]{27}|[0-9]+", "#"), cpu, Long::sum);
                javaThreads += cpu;
            }
        }
        byName.put("(not a Java thread)", OS.getProcessCpuTime() - javaThreads);
        return byName;
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
