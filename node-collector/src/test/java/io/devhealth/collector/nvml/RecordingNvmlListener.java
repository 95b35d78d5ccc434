package io.devhealth.collector.nvml;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.SourceState;
import io.devhealth.simulators.nvml.NvmlStub;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

/** The NVML tests' listener: reports and source states as delivered, in order, and waits on them. */
final class RecordingNvmlListener implements NvmlListener {

    final List<DeviceHealthReport> reports = new CopyOnWriteArrayList<>();
    final List<SourceState> states = new CopyOnWriteArrayList<>();
    final NvmlStub[] stubAtReport = new NvmlStub[1];
    final List<Long> pendingAtReport = new CopyOnWriteArrayList<>();

    @Override
    public void onReport(DeviceHealthReport report) {
        reports.add(report);
        if (stubAtReport[0] != null) {
            pendingAtReport.add(stubAtReport[0].pendingEvents());
        }
    }

    @Override
    public void onSourceState(SourceState state) {
        states.add(state);
    }

    List<DeviceHealthReport> of(String uuid) {
        return reports.stream().filter(r -> uuid.equals(r.getDevice().getUuid()) && r.getDevice().getMigGpuInstanceId() == null)
                .collect(Collectors.toList());
    }

    DeviceHealthReport latest(String uuid) {
        List<DeviceHealthReport> mine = of(uuid);
        return mine.isEmpty() ? null : mine.get(mine.size() - 1);
    }

    DeviceHealthReport latestMig(String uuid, int gi, int ci) {
        DeviceHealthReport last = null;
        for (DeviceHealthReport r : reports) {
            if (uuid.equals(r.getDevice().getUuid()) && Objects.equals(r.getDevice().getMigGpuInstanceId(), gi)
                    && Objects.equals(r.getDevice().getMigComputeInstanceId(), ci)) {
                last = r;
            }
        }
        return last;
    }

    /** Waits until the GPU's latest report has {@code health} and a message containing {@code messagePart} (none when null). */
    void awaitHealth(String uuid, HealthStatus health, String messagePart, Duration wait) {
        await().atMost(wait).untilAsserted(() -> {
            DeviceHealthReport latest = latest(uuid);
            assertThat(latest).isNotNull();
            assertThat(latest.getHealth()).isEqualTo(health);
            if (messagePart == null) {
                assertThat(latest.getMessage()).isNull();
            } else {
                assertThat(latest.getMessage()).contains(messagePart);
            }
        });
    }
}
