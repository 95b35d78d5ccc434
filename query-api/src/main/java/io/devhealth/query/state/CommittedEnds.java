package io.devhealth.query.state;

import io.devhealth.processor.DeviceHealthTopology;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.LagInfo;

/**
 * The lags of this instance's store copies against what a copy can hold: each changelog partition's last stable
 * offset, asked of the broker as a read_committed reader.
 *
 * <p>Kafka Streams' own lag ({@code KafkaStreams#allLocalStorePartitionLags}) counts to the log's end, which
 * includes the records of a transaction still open. Under exactly-once, an instance killed in the middle of a
 * transaction leaves one open on each changelog it wrote until the broker aborts it (the producer's transaction
 * timeout) or the task's next producer fences it. A copy restored with read_committed cannot pass those records,
 * so against the log's end the promoted standby and every other copy of those partitions stayed "behind" for up to
 * ten seconds while holding everything committed (seen in the scale-out test: a standby "at 415 of 417", the
 * active copy "lacks 2"). Against the last stable offset they are caught up.
 *
 * <p>A changelog named by Kafka Streams' convention ({@code <application.id>-<store>-changelog}) whose offset
 * the broker does not give keeps the log's end Kafka Streams reported: a copy may then look further behind than
 * it is, never closer.
 */
public final class CommittedEnds {

    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private final Admin admin;
    private final String applicationId;

    public CommittedEnds(Admin admin, String applicationId) {
        this.admin = admin;
        this.applicationId = applicationId;
    }

    /** {@code lags} (by store and partition), each with its changelog's last stable offset as the end. */
    Map<String, Map<Integer, CopyLag>> of(Map<String, Map<Integer, LagInfo>> lags) {
        Map<TopicPartition, OffsetSpec> ask = new HashMap<>();
        lags.forEach((store, byPartition) -> byPartition.keySet()
                .forEach(partition -> ask.put(changelog(store, partition), OffsetSpec.latest())));
        Map<TopicPartition, Long> stable = stableOffsets(ask);
        Map<String, Map<Integer, CopyLag>> copies = new HashMap<>();
        lags.forEach((store, byPartition) -> byPartition.forEach((partition, lag) -> {
            Long end = stable.get(changelog(store, partition));
            copies.computeIfAbsent(store, s -> new HashMap<>()).put(partition,
                    new CopyLag(lag.currentOffsetPosition(), end == null ? lag.endOffsetPosition() : end));
        }));
        return copies;
    }

    private Map<TopicPartition, Long> stableOffsets(Map<TopicPartition, OffsetSpec> ask) {
        if (ask.isEmpty()) {
            return Map.of();
        }
        ListOffsetsResult result = admin.listOffsets(ask, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED));
        Map<TopicPartition, Long> stable = new HashMap<>();
        for (TopicPartition changelog : ask.keySet()) {
            try {
                stable.put(changelog, result.partitionResult(changelog).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).offset());
            } catch (ExecutionException e) {
                // Not a changelog by that name (or not known yet): Kafka Streams' own end stands for this copy.
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while asking the changelogs' last stable offsets", e);
            } catch (TimeoutException e) {
                throw new IllegalStateException("the changelogs' last stable offsets did not come within " + TIMEOUT, e);
            }
        }
        return stable;
    }

    private TopicPartition changelog(String store, int partition) {
        return new TopicPartition(DeviceHealthTopology.changelog(applicationId, store), partition);
    }
}
