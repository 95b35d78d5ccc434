package io.devhealth.testkit.kafka;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/** What a consumer group has committed, as tests that start, stop and kill its members check it. */
public final class CommittedOffsets {

    private static final long TIMEOUT_SECONDS = 10;

    private CommittedOffsets() {}

    /**
     * Whether {@code group} has committed every partition of {@code topic} up to the partition's end: nothing
     * in it is left for the group to read again. An empty partition needs no commit. False while the broker
     * does not answer, so that it can be waited for.
     */
    public static boolean atEnd(Admin admin, String group, String topic) {
        try {
            Map<TopicPartition, OffsetSpec> partitions = admin.describeTopics(List.of(topic)).allTopicNames()
                    .get(TIMEOUT_SECONDS, TimeUnit.SECONDS).get(topic).partitions().stream()
                    .collect(Collectors.toMap(p -> new TopicPartition(topic, p.partition()), p -> OffsetSpec.latest()));
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = admin.listOffsets(partitions).all()
                    .get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                    .get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            return ends.entrySet().stream().allMatch(end -> end.getValue().offset() == 0
                    || (committed.get(end.getKey()) != null && committed.get(end.getKey()).offset() == end.getValue().offset()));
        } catch (ExecutionException | TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
