package io.devhealth.processor;

import static io.devhealth.processor.TopologyFixture.DRIVER;
import static io.devhealth.processor.TopologyFixture.T0;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.processor.internals.stores.StateKeys;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.serde.Encoded;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Three nodes whose clocks disagree by up to 10 minutes (one right, one 5 minutes ahead, one 5
 * minutes behind; observedAt and record timestamps both skewed, all on one partition so that stream
 * time is the fastest node's) feed one processor. Silence is judged on each node's own clock: no
 * device of a talking node turns Unknown, a silent node's devices turn Unknown within a second of
 * their own deadline, transitions carry the node's time and the history keeps their order.
 */
@Tag("fault")
class ClockSkewTest {

    private static final Duration SKEW = Duration.ofMinutes(5);
    private static final Duration TIMEOUT = TimeoutPolicy.DEFAULT;
    private static final Duration REPORT_EVERY = Duration.ofSeconds(5);
    private static final int DEVICES = 2;

    private final TopologyFixture fixture = new TopologyFixture();
    private final Map<String, Duration> offsets = Map.of("node-right", Duration.ZERO, "node-ahead", SKEW,
            "node-behind", SKEW.negated());
    private final Map<String, Long> sequences = new HashMap<>();
    private final Map<String, Instant> lastReport = new HashMap<>();
    /** Each transition and the wall-clock second (from T0) after which it was read. */
    private final List<KeyValue<Long, HealthTransition>> seen = new ArrayList<>();

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    @Test
    void shouldJudgeSilenceOnEachNodesOwnClock() {
        // 0-60 s: everyone reports every 5 s. Then the skewed nodes go quiet; node-right goes on to 150 s.
        // At 120 s the skewed nodes say one word each, then are quiet again (a second expiry at 150 s).
        for (int second = 0; second <= 150; second++) {
            if (second % REPORT_EVERY.toSeconds() == 0) {
                report("node-right", second, HealthStatus.HEALTHY);
                if (second <= 60) {
                    report("node-ahead", second, HealthStatus.HEALTHY);
                    report("node-behind", second, HealthStatus.HEALTHY);
                }
            }
            if (second == 120) {
                // node-ahead recovers, node-behind comes back with a failure.
                report("node-ahead", second, HealthStatus.HEALTHY);
                report("node-behind", second, HealthStatus.UNHEALTHY);
            }
            fixture.jumpWallClock(Duration.ofSeconds(1));
            long wallSecond = second + 1;
            fixture.transitions.readRecordsToList().forEach(r -> seen.add(KeyValue.pair(wallSecond, r.value())));
        }

        assertThat(transitions("node-right")).as("a node that keeps talking never goes Unknown, whatever the others' clocks")
                .extracting(kv -> kv.value.getTo()).containsOnly(HealthStatus.HEALTHY).hasSize(DEVICES);
        for (String node : List.of("node-ahead", "node-behind")) {
            String back = node.equals("node-ahead") ? "HEALTHY" : "UNHEALTHY";
            List<KeyValue<Long, HealthTransition>> ofNode = transitions(node);
            assertThat(ofNode).extracting(kv -> kv.value.getFrom() + "->" + kv.value.getTo()).as(node).containsExactlyInAnyOrder(
                    "UNKNOWN->HEALTHY", "UNKNOWN->HEALTHY", "HEALTHY->UNKNOWN", "HEALTHY->UNKNOWN",
                    "UNKNOWN->" + back, "UNKNOWN->" + back, back + "->UNKNOWN", back + "->UNKNOWN");
            // Its last words were at wall seconds 60 and 120: each expiry is at the node's own deadline, and
            // seen within a second of that deadline as the processor's wall clock lives it.
            for (KeyValue<Long, HealthTransition> expiry : ofNode.stream().filter(kv -> kv.value.getTo() == HealthStatus.UNKNOWN).toList()) {
                long lastWord = expiry.key < 120 ? 60 : 120;
                assertThat(expiry.value.getAt()).as("%s expires on its own clock", node).isEqualTo(nodeTime(node, lastWord).plus(TIMEOUT));
                assertThat(expiry.key).as("%s expiry seen at wall second", node)
                        .isBetween(lastWord + TIMEOUT.toSeconds(), lastWord + TIMEOUT.toSeconds() + 1);
            }
            for (int d = 0; d < DEVICES; d++) {
                assertThat(history(node, "gpu-" + d)).as("history of %s gpu-%s, in node time order", node, d)
                        .containsExactly(
                                "UNKNOWN->HEALTHY@" + nodeTime(node, 0),
                                "HEALTHY->UNKNOWN@" + nodeTime(node, 60).plus(TIMEOUT),
                                "UNKNOWN->" + back + "@" + nodeTime(node, 120),
                                back + "->UNKNOWN@" + nodeTime(node, 120).plus(TIMEOUT));
            }
        }
        System.out.printf("clock-skew nodes=%s transitions=%d wallSeconds=151%n", offsets, seen.size());
    }

    private void report(String node, int wallSecond, HealthStatus health) {
        Instant observedAt = nodeTime(node, wallSecond);
        for (int d = 0; d < DEVICES; d++) {
            long sequence = sequences.merge(node, 1L, Long::sum);
            DeviceHealthReport report = DeviceHealthReport.newBuilder()
                    .setNode(node).setSource(SourceKind.DRA).setSourceName(DRIVER)
                    .setDevice(ref(node, "gpu-" + d)).setHealth(health)
                    .setKind(lastReport.containsKey(node + d) ? ReportKind.KEEPALIVE : ReportKind.CHANGE)
                    .setObservedAt(observedAt).setCollectorEpoch(TopologyFixture.EPOCH).setSequence(sequence).build();
            if (health != HealthStatus.HEALTHY || wallSecond == 120) {
                report.setKind(ReportKind.CHANGE);
            }
            lastReport.put(node + d, observedAt);
            // The collector stamps records with its own clock too: record time is skewed like observedAt.
            fixture.pipe(node, report, observedAt);
        }
    }

    private Instant nodeTime(String node, long wallSecond) {
        return T0.plusSeconds(wallSecond).plus(offsets.get(node));
    }

    private static DeviceRef ref(String node, String device) {
        return DeviceRef.newBuilder().setDriver(DRIVER).setPool(node).setDevice(device).build();
    }

    private List<KeyValue<Long, HealthTransition>> transitions(String node) {
        return seen.stream().filter(kv -> kv.value.getNode().equals(node)).toList();
    }

    private List<String> history(String node, String device) {
        WindowStore<String, Encoded<HealthTransition>> store = fixture.driver.getWindowStore(DeviceHealthTopology.DEVICE_HISTORY_STORE);
        List<String> out = new ArrayList<>();
        try (WindowStoreIterator<Encoded<HealthTransition>> it = store.fetch(StateKeys.device(node, ref(node, device)),
                T0.minus(Duration.ofHours(1)), T0.plus(Duration.ofHours(1)))) {
            it.forEachRemaining(kv -> out.add(kv.value.value().getFrom() + "->" + kv.value.value().getTo() + "@" + kv.value.value().getAt()));
        }
        return out;
    }
}
