package io.devhealth.processor;

import static io.devhealth.processor.TopologyFixture.DRIVER;
import static io.devhealth.processor.TopologyFixture.T0;
import static io.devhealth.processor.TopologyFixture.report;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Silence → Unknown, eagerly, on the node's clock (never the processor's), driven by TopologyTestDriver's wall clock. */
class SilenceTimeoutTest {

    private TopologyFixture fixture = new TopologyFixture();

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    /**
     * A collector that behaves: every second of wall time, a heartbeat every 5 s and a keep-alive
     * for each healthy device every 15 s (half the 30 s timeout), all observed "now".
     */
    private void collectorRuns(Duration duration, String... devices) {
        for (long s = 0; s < duration.toSeconds(); s++) {
            fixture.runFor(Duration.ofSeconds(1));
            collectorTick(fixture.wall(), devices);
        }
    }

    private void collectorTick(Instant at, String... devices) {
        long second = Duration.between(T0, at).toSeconds();
        if (second % 5 == 0) {
            fixture.heartbeat(at, SourceStatus.UP);
        }
        if (second % 15 == 0) {
            for (String device : devices) {
                fixture.send(report(device, HealthStatus.HEALTHY, at).setKind(ReportKind.KEEPALIVE));
            }
        }
    }

    private List<HealthStatus> transitionsTo() {
        return fixture.transitions.readValuesToList().stream().map(HealthTransition::getTo).toList();
    }

    @Test
    void shouldExpireSilentDeviceWithinOneSecondOfItsTimeout() {
        fixture.allocate("train-0", "gpu-0");
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0));
        fixture.heartbeat(T0, SourceStatus.UP);
        assertThat(transitionsTo()).containsExactly(HealthStatus.HEALTHY);

        // The node stays up (heartbeats) but the device's source says nothing more.
        for (int s = 1; s <= 29; s++) {
            fixture.runFor(Duration.ofSeconds(1));
            if (s % 5 == 0) {
                fixture.heartbeat(fixture.wall(), SourceStatus.UP);
            }
        }
        assertThat(fixture.transitions.isEmpty()).as("still fresh at 29 s").isTrue();
        fixture.runFor(Duration.ofSeconds(1));

        List<HealthTransition> expired = fixture.transitions.readValuesToList();
        assertThat(expired).singleElement().satisfies(t -> {
            assertThat(t.getFrom()).isEqualTo(HealthStatus.HEALTHY);
            assertThat(t.getTo()).isEqualTo(HealthStatus.UNKNOWN);
            assertThat(t.getAt()).isEqualTo(T0.plusSeconds(30));
            assertThat(t.getReason()).isEqualTo("SourceSilent");
            assertThat(t.getMessage()).contains(DRIVER).contains("30 s");
            assertThat(t.getAffectedPods()).hasSize(1);
        });
        PodDeviceStatus status = fixture.podStatus.readValuesToList().stream().reduce((a, b) -> b).orElseThrow();
        assertThat(status.getSummary()).isEqualTo(HealthStatus.UNKNOWN);
    }

    @Test
    void shouldExpireWhenTheWholeNodeFallsSilent() {
        Instant start = pastStartGrace();
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, start));
        fixture.heartbeat(start, SourceStatus.UP);
        transitionsTo();

        fixture.runFor(Duration.ofSeconds(29));
        assertThat(fixture.transitions.isEmpty()).isTrue();
        fixture.runFor(Duration.ofSeconds(1));

        assertThat(fixture.transitions.readValuesToList()).extracting(HealthTransition::getTo, HealthTransition::getAt)
                .containsExactly(tuple(HealthStatus.UNKNOWN, start.plusSeconds(30)));
    }

    @Test
    void shouldNotExpireWithinTheGraceAfterStartWhatItDidNotWitness() {
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0));
        transitionsTo();

        // Started at T0: the first 10 s may still bring a backlog, so silence counts from T0 + 10 s.
        fixture.runFor(Duration.ofSeconds(39));
        assertThat(fixture.transitions.isEmpty()).isTrue();
        fixture.runFor(Duration.ofSeconds(1));
        assertThat(transitionsTo()).containsExactly(HealthStatus.UNKNOWN);
    }

    /**
     * A processor working off a backlog at a third of the input's pace: at each second of wall time it
     * reads what the nodes sent up to a third of that time after the start. Node {@code NODE} sends a
     * keep-alive every 15 s (half its 30 s timeout); a busy node sends a report every second. Between
     * two of its keep-alives the processor waits 45 s of wall time, but its input has only covered 15 s
     * of the node's time: the device is not silent, and it never goes Unknown. Once the input has
     * caught up and the node says nothing more, its silence is seen as usual.
     */
    @Test
    void shouldNotExpireADeviceWhoseNextReportIsStillInTheBacklog() {
        Instant start = pastStartGrace();
        DeviceRef busy = DeviceRef.newBuilder().setDriver(DRIVER).setPool("node-busy").setDevice("gpu-0").build();
        long busySequence = 0;
        long readUpTo = -1;
        for (int s = 0; s <= 120; s++) {
            if (s > 0) {
                fixture.runFor(Duration.ofSeconds(1));
            }
            for (long sent = readUpTo + 1; sent <= s / 3; sent++) {
                Instant at = start.plusSeconds(sent);
                if (sent % 15 == 0) {
                    fixture.send(report("gpu-0", HealthStatus.HEALTHY, at).setKind(ReportKind.KEEPALIVE));
                }
                fixture.pipe("node-busy", report("gpu-0", HealthStatus.HEALTHY, at).setNode("node-busy").setDevice(busy)
                        .setKind(ReportKind.KEEPALIVE).setCollectorEpoch(TopologyFixture.EPOCH).setSequence(++busySequence).build(), at);
                readUpTo = sent;
            }
        }
        assertThat(fixture.transitions.readValuesToList()).as("120 s of wall time, 40 s of input, no silence in it")
                .extracting(HealthTransition::getTo).containsOnly(HealthStatus.HEALTHY);

        // The backlog is worked off; the node's last keep-alive was the one sent at start + 30 s. The busy
        // node goes on, caught up: the input covers the node's time at wall pace from here.
        Instant caughtUp = fixture.wall();
        fixture.pipe("node-busy", report("gpu-0", HealthStatus.HEALTHY, caughtUp).setNode("node-busy").setDevice(busy)
                .setKind(ReportKind.KEEPALIVE).setCollectorEpoch(TopologyFixture.EPOCH).setSequence(++busySequence).build(), caughtUp);
        fixture.runFor(Duration.ofSeconds(40));
        assertThat(fixture.transitions.readValuesToList()).extracting(t -> t.getDevice().getPool(), HealthTransition::getTo)
                .contains(tuple(TopologyFixture.NODE, HealthStatus.UNKNOWN));
    }

    /** Lets the processor run past its start grace, as a long-running one is; returns the wall time then. */
    private Instant pastStartGrace() {
        fixture.runFor(TopologyOptions.DEFAULT_RESTORE_GRACE);
        return fixture.wall();
    }

    @Test
    void shouldPreferDeviceTimeoutOverDriverSettingOverDefault() {
        fixture.close();
        fixture = new TopologyFixture(new TimeoutPolicy(Duration.ofSeconds(30), Map.of(DRIVER, Duration.ofSeconds(10))));
        Instant start = pastStartGrace();
        fixture.send(report("by-device", HealthStatus.HEALTHY, start).setTimeoutSeconds(5L));
        fixture.send(report("by-driver", HealthStatus.HEALTHY, start));
        fixture.send(report("by-default", HealthStatus.HEALTHY, start).setSourceName("other.example.com")
                .setDevice(TopologyFixture.device("by-default")));
        fixture.transitions.readValuesToList();

        fixture.runFor(Duration.ofSeconds(31));

        assertThat(fixture.transitions.readValuesToList()).extracting(t -> t.getDevice().getDevice(), HealthTransition::getAt)
                .containsExactly(
                        tuple("by-device", start.plusSeconds(5)),
                        tuple("by-driver", start.plusSeconds(10)),
                        tuple("by-default", start.plusSeconds(30)));
    }

    @Test
    void shouldNotExpireAnythingAfterTheProcessorWasDownWhileCollectorsKeptReporting() {
        fixture.allocate("train-0", "gpu-0", "gpu-1");
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0));
        fixture.send(report("gpu-1", HealthStatus.HEALTHY, T0));
        collectorRuns(Duration.ofSeconds(20), "gpu-0", "gpu-1");
        assertThat(transitionsTo()).containsExactly(HealthStatus.HEALTHY, HealthStatus.HEALTHY);

        // The processor is down for 5 minutes: its wall clock moves on without a single tick...
        Instant downAt = fixture.wall();
        fixture.jumpWallClock(Duration.ofMinutes(5));
        // ...while the collector kept writing; on restart the whole backlog arrives at once.
        for (Instant at = downAt.plusSeconds(1); !at.isAfter(fixture.wall()); at = at.plusSeconds(1)) {
            collectorTick(at, "gpu-0", "gpu-1");
        }
        // Then it runs on, live, for longer than any timeout.
        collectorRuns(Duration.ofSeconds(90), "gpu-0", "gpu-1");

        assertThat(fixture.transitions.readValuesToList()).as("no spurious Unknown").isEmpty();
    }

    @Test
    void shouldNotExpireAnythingWhenTheBacklogArrivesBeforeTheWallClockMoves() {
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0));
        transitionsTo();

        // A lagging processor: five minutes of the node's life processed in one go, then live ticks.
        for (Instant at = T0.plusSeconds(1); !at.isAfter(T0.plusSeconds(300)); at = at.plusSeconds(1)) {
            collectorTick(at, "gpu-0");
        }
        for (int s = 1; s <= 60; s++) {
            fixture.runFor(Duration.ofSeconds(1));
            collectorTick(T0.plusSeconds(300 + s), "gpu-0");
        }

        assertThat(fixture.transitions.readValuesToList()).isEmpty();
    }

    @Test
    void shouldExpireOnTheNodesOwnTimeWhenTheBacklogShowsASilence() {
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0));
        transitionsTo();

        // In the backlog the device fell silent from 0 s to 45 s while heartbeats went on, then spoke again.
        for (int s = 5; s <= 45; s += 5) {
            fixture.heartbeat(T0.plusSeconds(s), SourceStatus.UP);
        }
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(46)));

        assertThat(fixture.transitions.readValuesToList()).extracting(HealthTransition::getTo, HealthTransition::getAt)
                .containsExactly(tuple(HealthStatus.UNKNOWN, T0.plusSeconds(30)), tuple(HealthStatus.HEALTHY, T0.plusSeconds(46)));
    }

    @Test
    void shouldRecoverFromUnknownToHealthyWhenReportsResume() {
        fixture.allocate("train-0", "gpu-0");
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0));
        fixture.runFor(Duration.ofSeconds(31));
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, fixture.wall()));

        assertThat(transitionsTo()).containsExactly(HealthStatus.HEALTHY, HealthStatus.UNKNOWN, HealthStatus.HEALTHY);
        assertThat(fixture.podStatus.readValuesToList()).extracting(PodDeviceStatus::getSummary)
                .containsExactly(HealthStatus.UNKNOWN, HealthStatus.HEALTHY, HealthStatus.UNKNOWN, HealthStatus.HEALTHY);
    }

    @Test
    void shouldLetDevicesOfASourceReportedDownGoUnknownAfterTheirTimeoutNotAtOnce() {
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0));
        transitionsTo();
        fixture.runFor(Duration.ofSeconds(5));
        fixture.heartbeat(fixture.wall(), SourceStatus.DOWN);
        assertThat(fixture.transitions.isEmpty()).as("a source going down is not a device failure").isTrue();

        // Keep-alives keep coming (e.g. from a stale cache) but the node says the source is down.
        for (int s = 6; s <= 30; s++) {
            fixture.runFor(Duration.ofSeconds(1));
            if (s % 10 == 0) {
                fixture.send(report("gpu-0", HealthStatus.HEALTHY, fixture.wall()).setKind(ReportKind.KEEPALIVE));
                fixture.heartbeat(fixture.wall(), SourceStatus.DOWN);
            }
        }

        assertThat(fixture.transitions.readValuesToList()).extracting(HealthTransition::getTo, HealthTransition::getAt)
                .containsExactly(tuple(HealthStatus.UNKNOWN, T0.plusSeconds(30)));
    }

    @Test
    void shouldNotCountSilenceDuringTheGraceAfterAStall() {
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0));
        transitionsTo();
        fixture.runFor(Duration.ofSeconds(25));
        fixture.jumpWallClock(Duration.ofSeconds(20));
        fixture.runFor(Duration.ofSeconds(9));
        assertThat(fixture.transitions.isEmpty()).as("25 s witnessed, then the stall and the grace do not count").isTrue();

        // Nothing comes after the grace either: silence counts again from the end of the grace (10 s),
        // so the device expires once 30 s of the node's time have passed by the estimate.
        fixture.runFor(Duration.ofSeconds(31));
        assertThat(transitionsTo()).containsExactly(HealthStatus.UNKNOWN);
    }
}
