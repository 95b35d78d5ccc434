package io.devhealth.processor.internals;

import io.devhealth.processor.DeviceHealthTopology;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceReportEnvelope;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.avro.PodRef;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.Severity;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies device reports: keeps the latest per device, and on a change of health emits one
 * HealthTransition and the new status of every pod using the device.
 */
public final class DeviceReportProcessor extends NodeStateProcessor<DeviceReportEnvelope> {

    private static final Logger LOGGER = LoggerFactory.getLogger(DeviceReportProcessor.class);

    @Override
    public void process(Record<String, DeviceReportEnvelope> record) {
        if (record.key() == null || record.value() == null) {
            LOGGER.warn("device report without key or value skipped key={}", record.key());
            return;
        }
        if (record.value().getPayload() instanceof DeviceHealthReport report) {
            apply(record.key(), report, record.timestamp());
        }
        // Heartbeats feed the silence detector (timeouts), which is not part of this skeleton.
    }

    private void apply(String node, DeviceHealthReport report, long timestamp) {
        if (report.getKind() == ReportKind.ABSENT) {
            report.setHealth(HealthStatus.UNKNOWN);
        }
        String key = StateKeys.device(node, report.getDevice());
        DeviceHealthReport previous = deviceState.get(key);
        deviceState.put(key, report);
        HealthStatus from = previous == null ? HealthStatus.UNKNOWN : previous.getHealth();
        boolean healthChanged = from != report.getHealth();
        boolean messageChanged = previous == null || !Objects.equals(previous.getMessage(), report.getMessage());
        if (!healthChanged && !messageChanged) {
            return;
        }
        DeviceRef device = report.getDevice();
        List<PodRef> affected = podsUsing(node, device);
        if (healthChanged) {
            HealthTransition transition = HealthTransition.newBuilder()
                    .setId(transitionId())
                    .setCluster(report.getCluster())
                    .setNode(node)
                    .setDevice(device)
                    .setFrom(from)
                    .setTo(report.getHealth())
                    .setSource(report.getSource())
                    .setReason(report.getReason())
                    .setMessage(report.getMessage())
                    .setAffectedPods(affected)
                    .setAt(report.getObservedAt())
                    .setSeverity(severity(report.getHealth()))
                    .build();
            context.forward(new Record<>(key, transition, timestamp), DeviceHealthTopology.TRANSITIONS_SINK);
            LOGGER.info("health transition node={} device={} from={} to={} pods={}", node, key, from, report.getHealth(), affected.size());
        }
        if (!affected.isEmpty()) {
            refreshPods(node, pod -> uses(pod, device), timestamp);
        }
    }

    /** Derived from the input record's coordinates: stable when exactly-once processing replays it. */
    private String transitionId() {
        return context.recordMetadata()
                .map(m -> m.topic() + "-" + m.partition() + "-" + m.offset())
                .orElseGet(() -> java.util.UUID.randomUUID().toString());
    }

    private List<PodRef> podsUsing(String node, DeviceRef device) {
        NodeAllocations nodeAllocations = allocations.get(node);
        List<PodRef> pods = new ArrayList<>();
        if (nodeAllocations != null) {
            for (PodAllocation pod : nodeAllocations.getPods()) {
                if (uses(pod, device)) {
                    pods.add(new PodRef(pod.getNamespace(), pod.getName(), null));
                }
            }
        }
        return pods;
    }

    private static boolean uses(PodAllocation pod, DeviceRef device) {
        return pod.getContainers().stream()
                .flatMap(c -> c.getClaims().stream())
                .flatMap(c -> c.getDevices().stream())
                .anyMatch(d -> d.getDriver().equals(device.getDriver()) && d.getPool().equals(device.getPool())
                        && d.getDevice().equals(device.getDevice()));
    }

    static Severity severity(HealthStatus to) {
        return switch (to) {
            case UNHEALTHY -> Severity.CRITICAL;
            case UNKNOWN -> Severity.WARNING;
            case HEALTHY -> Severity.INFO;
        };
    }
}
