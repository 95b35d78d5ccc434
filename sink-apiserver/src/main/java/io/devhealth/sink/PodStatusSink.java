package io.devhealth.sink;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.sink.condition.InvalidPodStatusException;
import io.devhealth.sink.condition.PodStatusWriter;
import io.devhealth.sink.postmortem.TerminatedDeviceHealth;
import io.fabric8.kubernetes.api.model.Pod;
import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.ratelimiter.RequestNotPermitted;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumes pod-device-status and brings each pod's status in line, one batch at a time:
 * <ol>
 *   <li>poll; group the records by pod (one write per pod per batch: the latest version wins, and
 *       terminated containers fold every status of the batch, see {@link TerminatedDeviceHealth});</li>
 *   <li>pause every assigned partition and write the pods on a bounded pool ({@code write.concurrency}),
 *       at most one write per pod at a time, every API request through the shared token bucket;</li>
 *   <li>keep polling (paused) so the group membership stays alive; when every pod is written, dropped
 *       (404) or dead-lettered (422, undecodable), commit the batch's offsets and resume.</li>
 * </ol>
 * A pod whose write keeps failing with 429/5xx/timeouts or an unreachable API server is retried (with
 * backoff) until it succeeds: the batch stays open, so consumption stays paused — nothing is committed
 * past it, nothing later is read, nothing reorders. Partitions revoked meanwhile are abandoned
 * uncommitted (their new owner writes them again; writes are idempotent).
 *
 * <p>A partition assigned with records after its committed offset is read up to the end it had when it was
 * assigned before a batch starts: its earlier owner may have written those records already (it was killed
 * before it committed them, or its patches were on the way when the partition was revoked), each pod at the
 * latest of them it had read, and all it had read lies below that end. Its first batch then holds each pod's
 * latest record up to there, so it never takes a pod back to an older status than the earlier owner showed,
 * as writing one poll's part of the backlog at a time would. A partition without a committed offset (a new
 * group) is written as it is read, so that a start holds no whole topic in memory.
 *
 * <p>Between batches, when the consumer has caught up, it performs the terminated-pod actions that no
 * record triggers ({@link TerminationSchedule}): the last status as of termination, and the freeze; and
 * every {@code postmortem.sweep.interval.ms} it deletes post-mortem records past their retention.
 */
public final class PodStatusSink implements Runnable, AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(PodStatusSink.class);
    /** Poll wait with nothing being written: returns as soon as records arrive. */
    private static final Duration IDLE_POLL = Duration.ofMillis(500);
    /**
     * Poll wait while a batch is being written (the partitions are paused, so nothing arrives): it is
     * how late the next batch can start after one finishes, which every change that arrived during a
     * batch waits on top of its own write (it was 100 ms; docs/PERFORMANCE.md §1). A paused poll costs
     * next to nothing.
     */
    private static final Duration BATCH_POLL = Duration.ofMillis(5);

    private final Consumer<String, byte[]> consumer;
    private final String topic;
    private final Function<byte[], PodDeviceStatus> decoder;
    private final PodStatusWriter writer;
    private final DeadLetterPublisher deadLetters;
    private final PodStatusMemory memory;
    private final TerminationSchedule terminations;
    private final SinkMetrics metrics;
    private final Clock clock;
    private final Duration terminationWindow;
    private final Duration requestTimeout;
    private final Duration retention;
    private final Duration sweepInterval;
    private Instant nextSweep;
    private final ExecutorService pool;
    private final Retry writeRetry;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicBoolean unreachable = new AtomicBoolean();
    private final List<ConsumerRecord<String, byte[]>> pending = new ArrayList<>();
    /** Partitions handed over with records an earlier owner may have written: the offset to read them to before writing. */
    private final Map<TopicPartition, Long> readBeforeWriting = new HashMap<>();
    private Batch batch;

    PodStatusSink(Consumer<String, byte[]> consumer, String topic, Function<byte[], PodDeviceStatus> decoder, PodStatusWriter writer,
                  DeadLetterPublisher deadLetters, PodStatusMemory memory, TerminationSchedule terminations, SinkMetrics metrics,
                  Clock clock, SinkConfig config) {
        this.consumer = consumer;
        this.topic = topic;
        this.decoder = decoder;
        this.writer = writer;
        this.deadLetters = deadLetters;
        this.memory = memory;
        this.terminations = terminations;
        this.metrics = metrics;
        this.clock = clock;
        this.terminationWindow = config.terminationWindow();
        this.requestTimeout = config.apiRequestTimeout();
        this.retention = config.postMortemRetention();
        this.sweepInterval = config.postMortemSweepInterval();
        // The first sweep waits one interval: a starting sink has its backlog to write first.
        this.nextSweep = clock.instant().plus(sweepInterval);
        AtomicInteger threads = new AtomicInteger();
        ThreadFactory factory = runnable -> {
            Thread thread = new Thread(runnable, "devhealth-sink-writer-" + threads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
        this.pool = Executors.newFixedThreadPool(config.writeConcurrency(), factory);
        // A pod whose requests gave up (ApiCallPolicy's bounded retry) is set aside and tried again at the
        // longest interval, without limit: the batch, and so consumption, waits for the API server.
        this.writeRetry = Retry.of("pod-write", RetryConfig.custom()
                .maxAttempts(Integer.MAX_VALUE)
                .intervalFunction(IntervalFunction.ofRandomized(config.retryMaxInterval(), 0.5))
                .retryOnException(PodStatusSink::worthRepeating)
                .build());
        writeRetry.getEventPublisher().onRetry(event -> {
            if (unreachable.compareAndSet(false, true)) {
                metrics.apiUnreachable(true);
                LOGGER.warn("api server not answering, consumption paused until it does error=\"{}\"",
                        event.getLastThrowable().getMessage());
            }
        });
    }

    /**
     * A failure that repeating the whole step later may mend: the API server's (transient, unreachable,
     * or our credentials until an operator fixes them), the rate limiter's wait, Kafka's, or conflicts
     * that outlasted their re-reads. Every other failure is the record's, not the moment's.
     */
    public static boolean worthRepeating(Throwable error) {
        return ApiCallPolicy.isRetryable(error) || error instanceof WriteConflictsExhaustedException
                || error instanceof RequestNotPermitted || error instanceof KafkaException;
    }

    @Override
    public void run() {
        consumer.subscribe(List.of(topic), new Rebalance());
        try {
            while (running.get()) {
                ConsumerRecords<String, byte[]> records = consumer.poll(batch == null ? IDLE_POLL : BATCH_POLL);
                records.forEach(pending::add);
                if (batch != null && batch.isDone()) {
                    finishBatch();
                }
                if (batch == null) {
                    if (pending.isEmpty()) {
                        startMaintenance();
                    } else if (handedOverPartitionsRead()) {
                        startBatch(new ArrayList<>(pending));
                        pending.clear();
                    }
                }
            }
        } catch (WakeupException e) {
            if (running.get()) {
                throw e;
            }
        } finally {
            pool.shutdownNow();
            try {
                pool.awaitTermination(requestTimeout.toMillis() + 1_000, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            consumer.close();
        }
    }

    // ---- batches -------------------------------------------------------------------------------------

    /** Whether every partition handed over with records an earlier owner may have written has been read to its end. */
    private boolean handedOverPartitionsRead() {
        readBeforeWriting.entrySet().removeIf(toRead -> position(toRead.getKey()) >= toRead.getValue());
        return readBeforeWriting.isEmpty();
    }

    /** The consumer's position in {@code partition}; -1 while it does not know it yet. */
    private long position(TopicPartition partition) {
        try {
            return consumer.position(partition, Duration.ZERO);
        } catch (org.apache.kafka.common.errors.TimeoutException e) {
            return -1;
        }
    }

    private void startBatch(List<ConsumerRecord<String, byte[]>> records) {
        Map<String, List<ConsumerRecord<String, byte[]>>> byPod = new LinkedHashMap<>();
        Batch next = new Batch();
        for (ConsumerRecord<String, byte[]> record : records) {
            next.track(new TopicPartition(record.topic(), record.partition()), record.offset());
            byPod.computeIfAbsent(record.key() == null ? "" : record.key(), k -> new ArrayList<>()).add(record);
        }
        for (Map.Entry<String, List<ConsumerRecord<String, byte[]>>> pod : inOrderOfUrgency(byPod, decoder)) {
            ConsumerRecord<String, byte[]> first = pod.getValue().get(0);
            TopicPartition partition = new TopicPartition(first.topic(), first.partition());
            next.works.add(new Work(partition, pool.submit(() -> repeatUntilDone(() -> writeRecords(pod.getValue())))));
        }
        consumer.pause(consumer.assignment());
        batch = next;
    }

    /**
     * The order a batch's pods go to the writers: every pod whose latest status has an Unhealthy device
     * first, then the others (recoveries, Unknowns, unchanged), each group in the order Kafka gave them.
     * During a backlog (an incident on many nodes, a processor restored after an outage) a batch holds
     * all that arrived while the previous one was written, thousands of pods, and the write that decides
     * something is the Unhealthy one: the Job controller applies a podFailurePolicy to a failed pod with
     * the conditions the pod has at that moment, so an Unhealthy condition that lands after it is too
     * late, while a recovery or an Unknown only updates what a reader sees. Whether the pod still runs is
     * not asked: a pod that has just failed is the one whose condition the Job controller is about to
     * read. Only the order between pods changes: a pod's records stay one write, and the batch's offsets
     * are committed when every pod of it is written. A value that cannot be decoded, or a tombstone,
     * is not urgent (it is dead-lettered or skipped by its writer as before).
     */
    static List<Map.Entry<String, List<ConsumerRecord<String, byte[]>>>> inOrderOfUrgency(
            Map<String, List<ConsumerRecord<String, byte[]>>> byPod, Function<byte[], PodDeviceStatus> decoder) {
        List<Map.Entry<String, List<ConsumerRecord<String, byte[]>>>> urgent = new ArrayList<>();
        List<Map.Entry<String, List<ConsumerRecord<String, byte[]>>>> rest = new ArrayList<>();
        for (Map.Entry<String, List<ConsumerRecord<String, byte[]>>> pod : byPod.entrySet()) {
            (unhealthy(pod.getValue(), decoder) ? urgent : rest).add(pod);
        }
        urgent.addAll(rest);
        return urgent;
    }

    /** Whether the pod's latest record (its last offset: versions of one key grow with it) says a device is Unhealthy. */
    private static boolean unhealthy(List<ConsumerRecord<String, byte[]>> records, Function<byte[], PodDeviceStatus> decoder) {
        byte[] latest = records.get(records.size() - 1).value();
        if (latest == null) {
            return false;
        }
        try {
            return decoder.apply(latest).getSummary() == HealthStatus.UNHEALTHY;
        } catch (RuntimeException e) {
            return false;
        }
    }

    private void finishBatch() {
        Map<TopicPartition, OffsetAndMetadata> commits = new HashMap<>();
        Set<TopicPartition> failed = new HashSet<>();
        for (Work work : batch.works) {
            if (!succeeded(work.future)) {
                failed.add(work.partition);
            }
        }
        Set<TopicPartition> assigned = consumer.assignment();
        batch.next.forEach((partition, next) -> {
            if (!assigned.contains(partition)) {
                return;
            }
            if (failed.contains(partition)) {
                // Unexpected: read the partition's batch again rather than skip it.
                consumer.seek(partition, batch.first.get(partition));
            } else {
                commits.put(partition, new OffsetAndMetadata(next));
            }
        });
        if (!commits.isEmpty()) {
            consumer.commitSync(commits);
        }
        batch = null;
        consumer.resume(consumer.paused());
        if (unreachable.compareAndSet(true, false)) {
            metrics.apiUnreachable(false);
            LOGGER.info("api server answering again, consumption resumed");
        }
    }

    private static boolean succeeded(Future<?> future) {
        try {
            future.get();
            return true;
        } catch (CancellationException | ExecutionException e) {
            LOGGER.error("pod write failed unexpectedly, its records will be read again error=\"{}\"", String.valueOf(e.getCause()), e);
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private void repeatUntilDone(Runnable task) {
        writeRetry.executeRunnable(task);
    }

    /** All records of one pod key in this batch, in offset order. */
    private void writeRecords(List<ConsumerRecord<String, byte[]>> records) {
        List<Decoded> statuses = new ArrayList<>();
        for (ConsumerRecord<String, byte[]> record : records) {
            if (record.value() == null) {
                // A tombstone: a node released the pod (it no longer reaches it; the processor's pod claims
                // read it). It says nothing about the pod in Kubernetes, and the sink keeps what it remembers:
                // a terminated pod's record is still to be maintained and frozen from its last status.
                metrics.skipped("released");
                continue;
            }
            try {
                statuses.add(new Decoded(decoder.apply(record.value()), record));
            } catch (RuntimeException e) {
                deadLetters.publish(record, "undecodable pod-device-status: " + e.getMessage(), e);
                metrics.deadLettered("undecodable");
            }
        }
        // A null key groups statuses of several pods: split them again by the pod they name.
        Map<String, List<Decoded>> byPod = new LinkedHashMap<>();
        statuses.forEach(d -> byPod.computeIfAbsent(PodStatusMemory.key(d.status()), k -> new ArrayList<>()).add(d));
        for (List<Decoded> pod : byPod.values()) {
            writePod(pod);
        }
    }

    private void writePod(List<Decoded> decoded) {
        // Latest version wins; equal versions keep Kafka's order (the sort is stable).
        decoded.sort(Comparator.comparingLong(d -> d.status().getVersion()));
        Decoded latest = decoded.get(decoded.size() - 1);
        String key = PodStatusMemory.key(latest.status());
        PodStatusMemory.Entry known = memory.get(key).orElse(null);
        if (known != null && known.frozen()) {
            metrics.skipped("frozen");
            return;
        }
        if (known != null && decoded.size() == 1 && known.appliedVersion() == latest.status().getVersion()
                && latest.status().equals(known.lastStatus())) {
            metrics.skipped("repeated");
            return;
        }
        if (decoded.size() > 1) {
            metrics.skipped("superseded", decoded.size() - 1);
        }
        List<PodDeviceStatus> statuses = decoded.stream().map(Decoded::status).toList();
        try {
            PodStatusWriter.Result result = metrics.writeDuration().record(() ->
                    writer.write(statuses, known == null ? null : known.lastStatus()));
            if (result.outcome() == PodStatusWriter.Outcome.WRITTEN) {
                metrics.delivered(Instant.ofEpochMilli(latest.record().timestamp()), clock.instant());
            }
            after(key, latest.status(), result);
        } catch (InvalidPodStatusException e) {
            metrics.deadLettered("invalid");
            deadLetters.publish(latest.record(), e.getMessage(), e);
            memory.applied(latest.status());
        } catch (RuntimeException e) {
            if (worthRepeating(e)) {
                throw e;
            }
            // Not the API server's fault and not fixable by retrying: keep it, with the reason.
            LOGGER.error("pod status write failed pod={} version={} error=\"{}\"", key, latest.status().getVersion(), e.toString(), e);
            metrics.deadLettered("unexpected");
            deadLetters.publish(latest.record(), "unexpected error writing pod status: " + e, e);
        }
    }

    private void after(String key, PodDeviceStatus status, PodStatusWriter.Result result) {
        switch (result.outcome()) {
            case WRITTEN -> memory.applied(status);
            case UNCHANGED -> {
                metrics.skipped("unchanged");
                memory.applied(status);
            }
            case POD_GONE -> {
                metrics.dropped("pod_gone");
                memory.forget(key);
                terminations.remove(key);
            }
            case OTHER_POD -> {
                // What the sink remembers is the earlier pod's: the new one starts clean.
                metrics.dropped("other_pod");
                memory.forget(key);
                terminations.remove(key);
            }
            case FROZEN -> {
                metrics.skipped("frozen");
                memory.frozen(key);
                terminations.remove(key);
            }
        }
        if (result.frozenNow()) {
            memory.frozen(key);
            terminations.remove(key);
        } else if (result.outcome() != PodStatusWriter.Outcome.POD_GONE && result.outcome() != PodStatusWriter.Outcome.OTHER_POD
                && result.outcome() != PodStatusWriter.Outcome.FROZEN && result.podFinishedAt().isPresent()) {
            terminations.schedule(status.getPod().getNamespace(), status.getPod().getName(), null,
                    result.podFinishedAt().get().plus(terminationWindow));
        }
    }

    // ---- terminated pods ------------------------------------------------------------------------------

    /** From the pod watcher: the pod reached Succeeded or Failed. */
    void onPodTerminated(Pod pod) {
        String key = pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
        Instant finished = TerminatedDeviceHealth.podFinishedAt(pod).orElse(clock.instant());
        PodStatusMemory.Entry known = memory.get(key).orElse(null);
        if (known != null && known.frozen()) {
            return;
        }
        if (known != null && known.lastStatus() != null) {
            // Its record is made now, and frozen after the window.
            terminations.schedule(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), clock.instant(),
                    finished.plus(terminationWindow));
        } else if (PodStatusWriter.hasCondition(pod, PodStatusWriter.CONDITION_TYPE) && !PodStatusWriter.isFinal(pod)) {
            // Written before this sink started: freeze it when due.
            terminations.schedule(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), null,
                    finished.plus(terminationWindow));
        }
    }

    /** From the pod watcher: the pod was deleted. */
    void onPodDeleted(Pod pod) {
        String key = pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
        if (TerminatedPodWatcher.terminated(pod)) {
            // Its record outlives it: late reports still reach it within the window, and at the window's
            // end it is frozen and the verdict published, as for a pod still there (a Job's pods are
            // often deleted right after they finish).
            onPodTerminated(pod);
            if (terminations.contains(key)) {
                return;
            }
        }
        terminations.remove(key);
        memory.forget(key);
    }

    private void startMaintenance() {
        Instant now = clock.instant();
        List<TerminationSchedule.Entry> due = terminations.due(now, caughtUp());
        boolean sweep = !now.isBefore(nextSweep);
        if (due.isEmpty() && !sweep) {
            return;
        }
        Batch next = new Batch();
        if (sweep) {
            nextSweep = now.plus(sweepInterval);
            next.works.add(new Work(null, pool.submit(this::sweep)));
        }
        for (TerminationSchedule.Entry entry : due) {
            boolean freeze = !now.isBefore(entry.freezeDue());
            next.works.add(new Work(null, pool.submit(() -> repeatUntilDone(() -> maintain(entry, freeze)))));
        }
        consumer.pause(consumer.assignment());
        batch = next;
    }

    private void maintain(TerminationSchedule.Entry entry, boolean freeze) {
        PodStatusMemory.Entry known = memory.get(entry.key()).orElse(null);
        List<PodDeviceStatus> last = known == null || known.lastStatus() == null ? List.of() : List.of(known.lastStatus());
        if (last.isEmpty() && !freeze) {
            // Nothing to bring the record to before its freeze (the sink no longer remembers the pod's last
            // status: the memory's bound evicted it): the freeze, when due, writes the record as it is.
            terminations.written(entry.key());
            return;
        }
        try {
            PodStatusWriter.Result result = freeze
                    ? writer.freeze(entry.namespace(), entry.name(), last, null)
                    : writer.write(last, null);
            boolean gone = result.outcome() == PodStatusWriter.Outcome.POD_GONE || result.outcome() == PodStatusWriter.Outcome.OTHER_POD;
            if (freeze || result.frozenNow() || gone || result.outcome() == PodStatusWriter.Outcome.FROZEN) {
                terminations.remove(entry.key());
            } else {
                terminations.written(entry.key());
            }
            if (result.frozenNow() || result.outcome() == PodStatusWriter.Outcome.FROZEN) {
                memory.frozen(entry.key());
            } else if (gone) {
                memory.forget(entry.key());
            }
        } catch (InvalidPodStatusException e) {
            // Nothing to dead-letter (no record triggered it); the status in Kafka is already kept.
            LOGGER.error("terminated pod status rejected pod={} error=\"{}\"", entry.key(), e.getMessage());
            terminations.remove(entry.key());
        }
    }

    /** Deletes post-mortem records past their retention; a failure waits for the next sweep. */
    private void sweep() {
        try {
            int deleted = writer.sweep(retention);
            LOGGER.debug("post-mortem retention sweep done deleted={}", deleted);
        } catch (RuntimeException e) {
            LOGGER.warn("post-mortem retention sweep failed, next one in {} error=\"{}\"", sweepInterval, e.getMessage());
        }
    }

    /** Every assigned partition has been read to its end: no status still waits in Kafka. */
    private boolean caughtUp() {
        for (TopicPartition partition : consumer.assignment()) {
            OptionalLong lag = consumer.currentLag(partition);
            if (lag.isEmpty() || lag.getAsLong() > 0) {
                return false;
            }
        }
        return true;
    }

    // ---- lifecycle ----------------------------------------------------------------------------------

    @Override
    public void close() {
        running.set(false);
        consumer.wakeup();
    }

    private final class Rebalance implements ConsumerRebalanceListener {

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            abandon(partitions, true);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            abandon(partitions, false);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            if (batch != null) {
                consumer.pause(partitions);
            }
            readBeforeWriting(partitions);
        }

        /** Notes the end of each partition that has records after its committed offset, to be read before writing. */
        private void readBeforeWriting(Collection<TopicPartition> partitions) {
            if (partitions.isEmpty()) {
                return;
            }
            try {
                Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(new HashSet<>(partitions));
                Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
                for (TopicPartition partition : partitions) {
                    OffsetAndMetadata from = committed.get(partition);
                    Long end = ends.get(partition);
                    if (from != null && end != null && end > from.offset()) {
                        readBeforeWriting.put(partition, end);
                    }
                }
            } catch (WakeupException | InterruptException e) {
                throw e;
            } catch (KafkaException e) {
                // Not worth stopping the sink for: these partitions are then written as they are read, a poll at a time.
                LOGGER.warn("cannot read the committed and end offsets of assigned partitions, writing them as they are read "
                        + "partitions={} error=\"{}\"", partitions, e.toString());
                return;
            }
            if (!readBeforeWriting.isEmpty()) {
                LOGGER.info("partitions handed over with records not committed, reading them to their end before writing to={}",
                        readBeforeWriting);
            }
        }

        /** Stops the writes of partitions we no longer own; commits those whose writes had all finished. */
        private void abandon(Collection<TopicPartition> partitions, boolean commit) {
            pending.removeIf(r -> partitions.contains(new TopicPartition(r.topic(), r.partition())));
            partitions.forEach(readBeforeWriting::remove);
            if (batch == null) {
                return;
            }
            Set<TopicPartition> unfinished = new HashSet<>();
            for (Work work : batch.works) {
                if (work.partition != null && partitions.contains(work.partition) && !work.future.isDone()) {
                    work.future.cancel(true);
                }
            }
            for (Work work : batch.works) {
                if (work.partition == null || !partitions.contains(work.partition)) {
                    continue;
                }
                try {
                    work.future.get(requestTimeout.toMillis() + 1_000, TimeUnit.MILLISECONDS);
                } catch (CancellationException | ExecutionException | TimeoutException e) {
                    unfinished.add(work.partition);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    unfinished.add(work.partition);
                }
            }
            Map<TopicPartition, OffsetAndMetadata> commits = new HashMap<>();
            for (TopicPartition partition : partitions) {
                Long next = batch.next.remove(partition);
                batch.first.remove(partition);
                if (commit && next != null && !unfinished.contains(partition)) {
                    commits.put(partition, new OffsetAndMetadata(next));
                }
            }
            batch.works.removeIf(w -> w.partition != null && partitions.contains(w.partition));
            if (!commits.isEmpty()) {
                consumer.commitSync(commits);
            }
            LOGGER.info("partitions revoked during writes partitions={} committed={} abandoned={}", partitions, commits.keySet(), unfinished);
        }
    }

    private record Decoded(PodDeviceStatus status, ConsumerRecord<String, byte[]> record) {
    }

    private record Work(TopicPartition partition, Future<?> future) {
    }

    /** The writes of one poll's records (or of one round of terminated-pod actions), and their offsets. */
    private static final class Batch {
        final List<Work> works = new ArrayList<>();
        final Map<TopicPartition, Long> first = new HashMap<>();
        final Map<TopicPartition, Long> next = new HashMap<>();

        void track(TopicPartition partition, long offset) {
            first.merge(partition, offset, Math::min);
            next.merge(partition, offset + 1, Math::max);
        }

        boolean isDone() {
            return works.stream().allMatch(w -> w.future.isDone());
        }
    }
}
