package io.devhealth.processor;

import static io.devhealth.processor.TopologyFixture.DRIVER;
import static io.devhealth.processor.TopologyFixture.EPOCH;
import static io.devhealth.processor.TopologyFixture.NODE;
import static io.devhealth.processor.TopologyFixture.T0;
import static io.devhealth.processor.TopologyFixture.report;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.processor.internals.input.InvalidInputException;
import io.devhealth.processor.internals.stores.StateKeys;
import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceStatus;
import io.devhealth.schema.serde.Encoded;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Records whose times the processor's clock cannot believe are dead-lettered with the reason before
 * they change anything: a future-dated report would otherwise advance the history stores' time and
 * drop every older entry, and a collector epoch of {@code Long.MAX_VALUE} would put the node's
 * de-duplication watermark where no later record passes. The bounds are the production defaults
 * (10 minutes ahead, the 30-day history retention back); the driver's wall clock is at T0.
 */
class TimeBoundsTest {

    private static final String DEVICE_KEY = StateKeys.device(NODE, DRIVER, NODE, "gpu-0");
    private static final String POD_KEY = StateKeys.pod("ml", "train-0");

    private final TopologyFixture fixture = new TopologyFixture();

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    @Test
    void shouldDeadLetterAFutureDatedReportAndKeepTheHistory() {
        fixture.allocate("train-0", "gpu-0");
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(2)).setReason("XID-79"));
        assertThat(deviceHistory()).extracting(HealthTransition::getTo).containsExactly(HealthStatus.HEALTHY, HealthStatus.UNHEALTHY);
        int podEntries = podHistory().size();
        assertThat(podEntries).isPositive();
        fixture.transitions.readRecordsToList();

        // A year ahead: past the 30-day retention of the history stores, were it applied.
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plus(Duration.ofDays(365))));

        DeadLetter letter = fixture.deadLetters.readValue();
        assertThat(letter.getReason()).contains("report from node " + NODE).contains("observedAt 2027-11-29T10:00:00Z")
                .contains("in the future").contains("future skew PT10M");
        assertThat(fixture.transitions.isEmpty()).as("nothing applied").isTrue();
        assertThat(deviceHistory()).extracting(HealthTransition::getTo).containsExactly(HealthStatus.HEALTHY, HealthStatus.UNHEALTHY);
        assertThat(podHistory()).hasSize(podEntries);

        // The node goes on: its next record in time is applied.
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(3)));
        assertThat(fixture.transitions.readValue().getTo()).isEqualTo(HealthStatus.HEALTHY);
    }

    @Test
    void shouldDeadLetterAFutureRecordTimestampEvenWithAPlausibleObservedAt() {
        fixture.sendRaw(report("gpu-0", HealthStatus.UNHEALTHY, T0).setCollectorEpoch(EPOCH).setSequence(1).build(),
                T0.plus(Duration.ofDays(2)));

        assertThat(fixture.deadLetters.readValue().getReason()).contains("record timestamp").contains("in the future");
        assertThat(fixture.transitions.isEmpty()).isTrue();
    }

    @Test
    void shouldDeadLetterARecordWithoutACollectorEpochInsteadOfDroppingItAsADuplicate() {
        fixture.allocate("train-0", "gpu-0");
        fixture.sendRaw(report("gpu-0", HealthStatus.UNHEALTHY, T0).setCollectorEpoch(0).setSequence(0).build(), T0);

        assertThat(fixture.deadLetters.readValue().getReason()).contains("without a collector epoch (0)");
        assertThat(fixture.transitions.isEmpty()).isTrue();
    }

    @Test
    void shouldDeadLetterAnImplausibleCollectorEpochSoTheNodeIsNotSilencedForGood() {
        fixture.sendRaw(report("gpu-0", HealthStatus.HEALTHY, T0).setCollectorEpoch(Long.MAX_VALUE).setSequence(1).build(), T0);

        assertThat(fixture.deadLetters.readValue().getReason()).contains("collector epoch " + Long.MAX_VALUE).contains("implausible");
        // Had the watermark moved to Long.MAX_VALUE, this record of the real epoch would be dropped as a duplicate.
        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(1)));
        assertThat(fixture.transitions.readValue().getTo()).isEqualTo(HealthStatus.UNHEALTHY);
    }

    @Test
    void shouldDeadLetterRecordsOlderThanTheHistoryKeepsButAcceptAClockAFewMinutesAhead() {
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.minus(Duration.ofDays(31))));
        assertThat(fixture.deadLetters.readValue().getReason()).contains("too old").contains("max age PT720H");

        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plus(Duration.ofMinutes(9))));
        assertThat(fixture.deadLetters.isEmpty()).isTrue();
        assertThat(fixture.transitions.readValue().getTo()).isEqualTo(HealthStatus.UNHEALTHY);
    }

    @Test
    void shouldBoundAllocationsAndInventoriesToo() {
        fixture.sendRaw(TopologyFixture.allocation("train-0", T0.plus(Duration.ofHours(1)), EPOCH, 1, "gpu-0"), T0);
        fixture.sendRaw(TopologyFixture.inventoryOf("gpu-0").setObservedAt(T0).setCollectorEpoch(T0.plus(Duration.ofDays(1)).toEpochMilli())
                .setSequence(2).build(), T0);

        List<String> reasons = fixture.deadLetters.readValuesToList().stream().map(DeadLetter::getReason).toList();
        assertThat(reasons).hasSize(2);
        assertThat(reasons.get(0)).contains("allocations from node " + NODE).contains("observedAt");
        assertThat(reasons.get(1)).contains("inventory from node " + NODE).contains("collector epoch");
        assertThat(fixture.podStatus.isEmpty()).as("no pod status from the refused allocations").isTrue();
    }

    @Test
    void shouldDeadLetterAHeartbeatAYearAheadSoTheNodesDevicesDoNotAllGoUnknown() {
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        fixture.send(report("gpu-1", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        fixture.transitions.readValuesToList();

        // Heartbeats advance the node's clock as reports do: applied, this one would put every device a year past its timeout.
        fixture.heartbeat(T0.plus(Duration.ofDays(365)), SourceStatus.UP);

        assertThat(fixture.deadLetters.readValue().getReason()).contains("heartbeat from node " + NODE)
                .contains("observedAt 2027-11-29T10:00:00Z").contains("in the future");
        assertThat(fixture.transitions.isEmpty()).as("no device went Unknown").isTrue();
        // The node's clock stayed where its reports put it: a keep-alive in time keeps the device Healthy.
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(20)).setKind(ReportKind.KEEPALIVE));
        fixture.send(report("gpu-1", HealthStatus.UNHEALTHY, T0.plusSeconds(20)));
        assertThat(fixture.transitions.readValuesToList()).extracting(t -> t.getDevice().getDevice() + " " + t.getTo())
                .containsExactly("gpu-1 UNHEALTHY");
    }

    @Test
    void shouldDeadLetterAHeartbeatWithAnImplausibleCollectorEpochSoTheNodeIsNotSilencedForGood() {
        // Heartbeats and reports share the node's de-duplication watermark.
        fixture.sendRaw(TopologyFixture.heartbeatOf(T0, SourceStatus.UP).setCollectorEpoch(Long.MAX_VALUE).setSequence(1).build(), T0);

        assertThat(fixture.deadLetters.readValue().getReason()).contains("heartbeat from node " + NODE)
                .contains("collector epoch " + Long.MAX_VALUE).contains("implausible");
        // Had the watermark moved to Long.MAX_VALUE, this report of the real epoch would be dropped as a duplicate.
        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(1)));
        assertThat(fixture.transitions.readValue().getTo()).isEqualTo(HealthStatus.UNHEALTHY);
    }

    @Test
    void shouldAcceptTimesOnTheBoundsAndRefuseAMillisecondBeyond() {
        TimeBounds bounds = new TimeBounds(Duration.ofMinutes(10), Duration.ofDays(30));
        long now = T0.toEpochMilli();
        long latest = now + Duration.ofMinutes(10).toMillis();
        long earliest = now - Duration.ofDays(30).toMillis();

        bounds.check(NODE, "heartbeat", Instant.ofEpochMilli(latest), latest, latest, now);
        bounds.check(NODE, "heartbeat", Instant.ofEpochMilli(earliest), earliest, EPOCH, now);

        assertThatThrownBy(() -> bounds.check(NODE, "heartbeat", Instant.ofEpochMilli(latest + 1), now, EPOCH, now))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("observedAt").hasMessageContaining("in the future");
        assertThatThrownBy(() -> bounds.check(NODE, "heartbeat", T0, latest + 1, EPOCH, now))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("record timestamp").hasMessageContaining("in the future");
        assertThatThrownBy(() -> bounds.check(NODE, "heartbeat", T0, now, latest + 1, now))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("collector epoch").hasMessageContaining("implausible");
        assertThatThrownBy(() -> bounds.check(NODE, "heartbeat", Instant.ofEpochMilli(earliest - 1), now, EPOCH, now))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("observedAt").hasMessageContaining("too old");
        assertThatThrownBy(() -> bounds.check(NODE, "heartbeat", T0, earliest - 1, EPOCH, now))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("record timestamp").hasMessageContaining("too old");
    }

    private List<HealthTransition> deviceHistory() {
        WindowStore<String, Encoded<HealthTransition>> store = fixture.driver.getWindowStore(DeviceHealthTopology.DEVICE_HISTORY_STORE);
        return all(store, DEVICE_KEY).stream().map(Encoded::value).toList();
    }

    private List<PodDeviceStatus> podHistory() {
        WindowStore<String, Encoded<PodDeviceStatus>> store = fixture.driver.getWindowStore(DeviceHealthTopology.POD_HISTORY_STORE);
        return all(store, POD_KEY).stream().map(Encoded::value).toList();
    }

    private static <V> List<V> all(WindowStore<String, V> store, String key) {
        List<V> values = new ArrayList<>();
        try (WindowStoreIterator<V> it = store.fetch(key, Instant.EPOCH, T0.plus(Duration.ofDays(400)))) {
            it.forEachRemaining(kv -> values.add(kv.value));
        }
        return values;
    }
}
