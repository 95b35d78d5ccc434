package io.devhealth.collector.dra;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.testkit.time.MutableClock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class SnapshotDiffTest {

    private final MutableClock clock = MutableClock.at("2026-11-29T10:00:00Z");
    private final SnapshotDiff diff = new SnapshotDiff("c1", "node-a", "gpu.example.com", Duration.ofSeconds(30), clock);

    private static ObservedDevice healthy(String device) {
        return new ObservedDevice("pool", device, HealthStatus.HEALTHY, "", 0);
    }

    @Test
    void shouldReportEveryDeviceOfTheFirstSnapshotAsChange() {
        List<DeviceHealthReport> reports = diff.apply(List.of(healthy("gpu-0"), healthy("gpu-1")));

        assertThat(reports).extracting(r -> r.getDevice().getDevice()).containsExactly("gpu-0", "gpu-1");
        assertThat(reports).allSatisfy(r -> {
            assertThat(r.getKind()).isEqualTo(ReportKind.CHANGE);
            assertThat(r.getSource()).isEqualTo(SourceKind.DRA);
            assertThat(r.getSourceName()).isEqualTo("gpu.example.com");
            assertThat(r.getDevice().getDriver()).isEqualTo("gpu.example.com");
            assertThat(r.getNode()).isEqualTo("node-a");
            assertThat(r.getObservedAt()).isEqualTo(clock.instant());
            assertThat(r.getMessage()).isNull();
        });
    }

    @Test
    void shouldNotReportUnchangedDeviceBeforeHalfItsTimeout() {
        diff.apply(List.of(healthy("gpu-0")));
        clock.advance(Duration.ofSeconds(14));

        assertThat(diff.apply(List.of(healthy("gpu-0")))).isEmpty();
    }

    @Test
    void shouldSendKeepAliveAtHalfTheDefaultTimeout() {
        diff.apply(List.of(healthy("gpu-0")));
        clock.advance(Duration.ofSeconds(15));

        assertThat(diff.apply(List.of(healthy("gpu-0")))).singleElement()
                .satisfies(r -> assertThat(r.getKind()).isEqualTo(ReportKind.KEEPALIVE));
        clock.advance(Duration.ofSeconds(10));
        assertThat(diff.apply(List.of(healthy("gpu-0")))).as("keep-alive clock restarts after sending").isEmpty();
    }

    @Test
    void shouldUseTheDevicesOwnTimeoutForKeepAlives() {
        ObservedDevice slow = new ObservedDevice("pool", "gpu-0", HealthStatus.HEALTHY, "", 120);
        diff.apply(List.of(slow));
        clock.advance(Duration.ofSeconds(59));
        assertThat(diff.apply(List.of(slow))).isEmpty();
        clock.advance(Duration.ofSeconds(1));
        assertThat(diff.apply(List.of(slow))).singleElement().satisfies(r -> {
            assertThat(r.getKind()).isEqualTo(ReportKind.KEEPALIVE);
            assertThat(r.getTimeoutSeconds()).isEqualTo(120L);
        });
    }

    @Test
    void shouldReportHealthAndMessageChangesAtOnce() {
        diff.apply(List.of(healthy("gpu-0")));
        clock.advance(Duration.ofSeconds(1));

        List<DeviceHealthReport> reports = diff.apply(List.of(
                new ObservedDevice("pool", "gpu-0", HealthStatus.UNHEALTHY, "XID 79", 0)));

        assertThat(reports).singleElement().satisfies(r -> {
            assertThat(r.getKind()).isEqualTo(ReportKind.CHANGE);
            assertThat(r.getHealth()).isEqualTo(HealthStatus.UNHEALTHY);
            assertThat(r.getMessage()).isEqualTo("XID 79");
        });
        assertThat(diff.apply(List.of(new ObservedDevice("pool", "gpu-0", HealthStatus.UNHEALTHY, "XID 79 again", 0))))
                .singleElement().satisfies(r -> assertThat(r.getKind()).isEqualTo(ReportKind.CHANGE));
    }

    @Test
    void shouldReportDeviceMissingFromSnapshotAsAbsentAndUnknown() {
        diff.apply(List.of(healthy("gpu-0"), healthy("gpu-1")));

        List<DeviceHealthReport> reports = diff.apply(List.of(healthy("gpu-0")));

        assertThat(reports).singleElement().satisfies(r -> {
            assertThat(r.getDevice().getDevice()).isEqualTo("gpu-1");
            assertThat(r.getKind()).isEqualTo(ReportKind.ABSENT);
            assertThat(r.getHealth()).isEqualTo(HealthStatus.UNKNOWN);
        });
        assertThat(diff.apply(List.of(healthy("gpu-0")))).as("absence is reported once").isEmpty();
        assertThat(diff.apply(List.of(healthy("gpu-0"), healthy("gpu-1")))).singleElement()
                .satisfies(r -> assertThat(r.getKind()).isEqualTo(ReportKind.CHANGE));
    }

    @Test
    void shouldReportEverythingAgainAfterReset() {
        diff.apply(List.of(healthy("gpu-0")));
        diff.reset();

        assertThat(diff.apply(List.of(healthy("gpu-0")))).singleElement()
                .satisfies(r -> assertThat(r.getKind()).isEqualTo(ReportKind.CHANGE));
    }

    @Test
    void shouldCutLongMessagesAtACharacterBoundary() {
        String message = "é".repeat(600); // 1200 bytes in UTF-8
        DeviceHealthReport report = diff.apply(List.of(new ObservedDevice("pool", "gpu-0", HealthStatus.UNHEALTHY, message, 0))).get(0);

        assertThat(report.getMessage().getBytes(java.nio.charset.StandardCharsets.UTF_8)).hasSize(1024);
        assertThat(report.getMessage()).isEqualTo("é".repeat(512));
    }
}
