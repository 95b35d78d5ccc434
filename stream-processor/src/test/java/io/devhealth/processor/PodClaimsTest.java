package io.devhealth.processor;

import static io.devhealth.processor.TopologyFixture.EPOCH;
import static io.devhealth.processor.TopologyFixture.T0;
import static io.devhealth.processor.TopologyFixture.allocation;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.serde.Encoded;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Any node can name any pod in its allocations. The processor keeps one node's word per pod: the first
 * node to claim the pod, until that node releases it (the pod left its allocations and its termination
 * window passed). Another node's statuses meanwhile are dead letters, and its releases change nothing.
 */
class PodClaimsTest {

    private static final Duration WINDOW = Duration.ofMinutes(2);
    private static final String A = "node-a";
    private static final String B = "node-b";
    private static final String POD = "ml/train-0";

    private final TopologyFixture fixture = new TopologyFixture(options -> options.terminationWindow(WINDOW));
    private long sequence = 1_000;

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    @Test
    void shouldKeepTheFirstNodesStatusAndDeadLetterAnotherNodesClaim() {
        allocate(A, T0, "gpu-0");
        allocate(B, T0.plusSeconds(5), "gpu-7");

        assertThat(latest().getNode()).as("the pod's accepted status").isEqualTo(A);
        assertThat(history()).extracting(PodDeviceStatus::getNode).as("the pod's history").containsOnly(A).isNotEmpty();
        List<DeadLetter> letters = fixture.deadLetters.readValuesToList();
        assertThat(letters).singleElement().satisfies(letter -> {
            assertThat(letter.getSourceTopic()).isEqualTo(fixture.topics.podDeviceStatus());
            assertThat(letter.getReason()).contains(POD, "held by node " + A, "from node " + B);
        });
        assertThat(claims("refused")).isEqualTo(1.0);
        assertThat(claims("ignored_release")).isZero();
    }

    @Test
    void shouldLetAnotherNodeClaimThePodOnceTheHolderReleasedIt() {
        allocate(A, T0, "gpu-0");
        nothing(A, T0.plusSeconds(10));
        fixture.podStatus.readRecordsToList();
        nothing(A, T0.plusSeconds(10).plus(WINDOW));

        assertThat(fixture.podStatus.readRecordsToList()).as("A's release, after the window").singleElement().satisfies(release -> {
            assertThat(release.key()).isEqualTo(POD);
            assertThat(release.value()).isNull();
            assertThat(new String(release.headers().lastHeader("devhealth.node").value())).isEqualTo(A);
        });
        assertThat(latest()).as("released").isNull();

        allocate(B, T0.plusSeconds(200), "gpu-7");
        assertThat(latest().getNode()).isEqualTo(B);
        assertThat(history()).extracting(PodDeviceStatus::getNode).as("A's record stays in the history").startsWith(A).endsWith(B);
        assertThat(fixture.deadLetters.readValuesToList()).isEmpty();
        assertThat(claims("refused")).isZero();
    }

    @Test
    void shouldIgnoreAReleaseFromANodeThatDoesNotHoldThePod() {
        allocate(A, T0, "gpu-0");
        allocate(B, T0.plusSeconds(5), "gpu-7");
        // B gives up the pod it named (no window on B's side: its snapshot without the pod, after the window).
        nothing(B, T0.plusSeconds(10));
        nothing(B, T0.plusSeconds(10).plus(WINDOW));

        List<TestRecord<String, PodDeviceStatus>> out = fixture.podStatus.readRecordsToList();
        assertThat(out).as("B released the pod").anySatisfy(release -> {
            assertThat(release.value()).isNull();
            assertThat(new String(release.headers().lastHeader("devhealth.node").value())).isEqualTo(B);
        });
        assertThat(latest().getNode()).as("A still holds the pod").isEqualTo(A);
        assertThat(claims("ignored_release")).isEqualTo(1.0);

        allocate(B, T0.plusSeconds(300), "gpu-7");
        assertThat(latest().getNode()).isEqualTo(A);
        assertThat(claims("refused")).isEqualTo(2.0);
    }

    @Test
    void shouldKeepEachNodesViewOfAPodApartOnOnePartition() {
        NodeAllocations aSnapshot = allocate(A, T0, "gpu-0");
        allocate(B, T0.plusSeconds(5), "gpu-7");
        fixture.podStatus.readRecordsToList();

        KeyValueStore<String, Encoded<PodDeviceStatus>> nodeSide = fixture.driver.getKeyValueStore(DeviceHealthTopology.NODE_POD_STATUS_STORE);
        assertThat(nodeSide.get(A + "/" + POD).value().getNode()).isEqualTo(A);
        assertThat(nodeSide.get(B + "/" + POD).value().getNode()).isEqualTo(B);

        // A's snapshot again, unchanged: A's status of the pod is what A last emitted, so nothing is emitted.
        pipe(A, NodeAllocations.newBuilder(aSnapshot).setObservedAt(T0.plusSeconds(20)).setSequence(++sequence).build());
        assertThat(fixture.podStatus.readRecordsToList()).as("B's status is not A's previous one").isEmpty();
    }

    /** Node {@code node}'s snapshot: pod {@value #POD} alone, holding {@code device}. */
    private NodeAllocations allocate(String node, Instant at, String device) {
        NodeAllocations snapshot = NodeAllocations.newBuilder(allocation("train-0", at, EPOCH, ++sequence, device)).setNode(node).build();
        pipe(node, snapshot);
        return snapshot;
    }

    /** Node {@code node}'s snapshot once no pod holds a device. */
    private void nothing(String node, Instant at) {
        pipe(node, NodeAllocations.newBuilder(allocation("none", at, EPOCH, ++sequence)).setNode(node).setPods(List.of()).build());
    }

    private void pipe(String node, NodeAllocations snapshot) {
        fixture.pipe(node, snapshot, snapshot.getObservedAt());
    }

    private PodDeviceStatus latest() {
        KeyValueStore<String, Encoded<PodDeviceStatus>> store = fixture.driver.getKeyValueStore(DeviceHealthTopology.POD_STATUS_STORE);
        Encoded<PodDeviceStatus> latest = store.get(POD);
        return latest == null ? null : latest.value();
    }

    private List<PodDeviceStatus> history() {
        WindowStore<String, Encoded<PodDeviceStatus>> store = fixture.driver.getWindowStore(DeviceHealthTopology.POD_HISTORY_STORE);
        List<PodDeviceStatus> entries = new ArrayList<>();
        try (WindowStoreIterator<Encoded<PodDeviceStatus>> all = store.fetch(POD, Instant.EPOCH, T0.plus(Duration.ofDays(1)))) {
            all.forEachRemaining((KeyValue<Long, Encoded<PodDeviceStatus>> entry) -> entries.add(entry.value.value()));
        }
        return entries;
    }

    private double claims(String outcome) {
        return fixture.meters.get("devhealth.processor.pod.claims").tag("outcome", outcome).counter().count();
    }
}
