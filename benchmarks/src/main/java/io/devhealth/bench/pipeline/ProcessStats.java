package io.devhealth.bench.pipeline;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Samples of the process and of Kafka while the benchmark runs: the JVM's resident set (Linux
 * {@code /proc/self/status}), the end offsets of the node-events topic, the processor's committed
 * offsets on it, and their difference (consumer lag) every few seconds.
 */
public final class ProcessStats implements AutoCloseable {

    private static final long LAG_SAMPLE_NANOS = 1_000_000_000L;

    private final Admin admin;
    private final String topic;
    private final String group;
    private final long startNanos = System.nanoTime();
    private final List<String> lagSamples = new ArrayList<>();
    private long lastLagSample;
    private long maxRss;
    private long maxLagSinceMark;

    public ProcessStats(Admin admin, String topic, String group) {
        this.admin = admin;
        this.topic = topic;
        this.group = group;
    }

    /** Takes an RSS sample, and a lag sample when the last one is 1 s old. */
    public void sample() {
        maxRss = Math.max(maxRss, rssBytes());
        long now = System.nanoTime();
        if (now - lastLagSample >= LAG_SAMPLE_NANOS) {
            lastLagSample = now;
            try {
                long lag = endOffsets() - committedOffsets();
                maxLagSinceMark = Math.max(maxLagSinceMark, lag);
                lagSamples.add(String.format(Locale.ROOT, "%.0fs:%d", (now - startNanos) / 1e9, lag));
            } catch (RuntimeException e) {
                lagSamples.add(String.format(Locale.ROOT, "%.0fs:?", (now - startNanos) / 1e9));
            }
        }
    }

    /** Starts a new maximum of the lag samples, e.g. at the start of a phase. */
    public void markLag() {
        maxLagSinceMark = 0;
        lastLagSample = 0;
    }

    /** The largest lag sampled since {@link #markLag()}. */
    public long maxLagSinceMark() {
        return maxLagSinceMark;
    }

    /** The latest lag sample, {@code seconds:lag}. */
    public String lastLag() {
        return lagSamples.isEmpty() ? "-" : lagSamples.get(lagSamples.size() - 1);
    }

    /** At most 12 samples, evenly picked, as {@code seconds:lag}. */
    public String lagSamples() {
        if (lagSamples.size() <= 12) {
            return String.join(" ", lagSamples);
        }
        List<String> picked = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            picked.add(lagSamples.get(i * (lagSamples.size() - 1) / 11));
        }
        return String.join(" ", picked);
    }

    public long maxRssBytes() {
        return Math.max(maxRss, rssBytes());
    }

    /** Sum of the topic's end offsets (records written, plus transaction markers for transactional producers). */
    public long endOffsets() {
        try {
            Set<TopicPartition> partitions = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().stream()
                    .map(p -> new TopicPartition(topic, p.partition())).collect(Collectors.toSet());
            return admin.listOffsets(partitions.stream().collect(Collectors.toMap(p -> p, p -> OffsetSpec.latest())))
                    .all().get().values().stream().mapToLong(r -> r.offset()).sum();
        } catch (Exception e) {
            throw new IllegalStateException("cannot read end offsets of " + topic, e);
        }
    }

    /** Sum of the processor's committed offsets on the topic. */
    public long committedOffsets() {
        try {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            return committed.entrySet().stream().filter(e -> e.getKey().topic().equals(topic) && e.getValue() != null)
                    .mapToLong(e -> e.getValue().offset()).sum();
        } catch (Exception e) {
            throw new IllegalStateException("cannot read committed offsets of " + group, e);
        }
    }

    public static long rssBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
        return 0;
    }

    /** Heap in use right after a full collection: the live set. */
    public static long heapAfterGc() {
        System.gc();
        return ManagementFactory.getMemoryPoolMXBeans().stream().filter(p -> p.getType() == MemoryType.HEAP)
                .map(MemoryPoolMXBean::getUsage).mapToLong(u -> u.getUsed()).sum();
    }

    /** The 1/5/15-minute load averages of the machine. */
    public static String loadAverage() {
        try {
            String[] parts = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return parts[0] + " " + parts[1] + " " + parts[2];
        } catch (IOException e) {
            return "?";
        }
    }

    public static long directoryBytes(Path dir) {
        if (!Files.exists(dir)) {
            return 0;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            return paths.filter(Files::isRegularFile).mapToLong(p -> {
                try {
                    return Files.size(p);
                } catch (IOException e) {
                    return 0; // RocksDB deletes files while we walk
                }
            }).sum();
        } catch (IOException | java.io.UncheckedIOException e) {
            return -1;
        }
    }

    public static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // A temporary directory left behind is not worth failing the report for.
        }
    }

    @Override
    public void close() {
        // The admin client belongs to the broker fixture.
    }
}
