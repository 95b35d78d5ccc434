package io.devhealth.processor;

import static io.devhealth.processor.TopologyFixture.T0;
import static io.devhealth.processor.TopologyFixture.report;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.ClaimDeviceStatus;
import io.devhealth.schema.avro.DeviceStatus;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.SourceStatus;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A pod's status is rebuilt and emitted once per commit, however many of its devices changed since the
 * last one, and still shows every state each device was in. TopologyTestDriver commits after every
 * input record and every punctuation, so "one commit" here is one record or one tick.
 */
class PodStatusPerCommitTest {

    private final TopologyFixture fixture = new TopologyFixture();

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    @Test
    void shouldEmitOneStatusForAPodWhoseDevicesExpireInTheSameCommit() {
        fixture.allocate("train-0", "gpu-0", "gpu-1");
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0));
        fixture.send(report("gpu-1", HealthStatus.HEALTHY, T0));
        assertThat(fixture.podStatus.readValuesToList()).extracting(PodDeviceStatus::getSummary)
                .containsExactly(HealthStatus.UNKNOWN, HealthStatus.UNKNOWN, HealthStatus.HEALTHY);

        nodeStaysUp(30);

        assertThat(fixture.transitions.readValuesToList()).hasSize(4); // two to Healthy, two to Unknown
        List<PodDeviceStatus> statuses = fixture.podStatus.readValuesToList();
        assertThat(statuses).as("one status for both devices' expiry").hasSize(1);
        assertThat(devices(statuses.get(0))).extracting(DeviceStatus::getHealth)
                .containsExactly(HealthStatus.UNKNOWN, HealthStatus.UNKNOWN);
        assertThat(statuses.get(0).getVersion()).isEqualTo(4);
    }

    @Test
    void shouldEmitTheStatusOfADeviceThatChangesAgainBeforeItsPodIsEmitted() {
        fixture.allocate("train-0", "gpu-0", "gpu-1");
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0));
        fixture.send(report("gpu-1", HealthStatus.HEALTHY, T0));
        fixture.podStatus.readValuesToList();
        nodeStaysUp(29);

        // One record finds gpu-0 silent past its deadline (Unknown at 30 s) and brings it back: the
        // Unknown in between is the pod's too, while gpu-1's expiry, a change of another device, joins
        // gpu-0's recovery in one status.
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(31)));

        assertThat(fixture.podStatus.readValuesToList()).extracting(PodStatusPerCommitTest::healths)
                .containsExactly(List.of(HealthStatus.UNKNOWN, HealthStatus.UNKNOWN),
                        List.of(HealthStatus.HEALTHY, HealthStatus.UNKNOWN));
    }

    /** {@code seconds} of wall time in which the node's collector sends heartbeats (every 5 s) and nothing else. */
    private void nodeStaysUp(int seconds) {
        fixture.heartbeat(T0, SourceStatus.UP);
        for (int s = 1; s <= seconds; s++) {
            fixture.runFor(Duration.ofSeconds(1));
            if (s % 5 == 0) {
                fixture.heartbeat(fixture.wall(), SourceStatus.UP);
            }
        }
    }

    private static List<DeviceStatus> devices(PodDeviceStatus status) {
        return status.getContainers().stream().flatMap(c -> c.getClaims().stream()).map(ClaimDeviceStatus::getDevices)
                .flatMap(List::stream).toList();
    }

    private static List<HealthStatus> healths(PodDeviceStatus status) {
        return devices(status).stream().map(DeviceStatus::getHealth).toList();
    }
}
