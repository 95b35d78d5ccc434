package io.devhealth.schema;

import java.util.List;
import java.util.Objects;

/**
 * The Kafka topics of the pipeline, all under one configurable prefix (default {@code devhealth.}).
 *
 * <p>The three collector topics are keyed by node name and must have the same partition count, so
 * that every fact about one node meets in one Kafka Streams task without a repartition.
 */
public record Topics(String prefix) {

    public static final String DEFAULT_PREFIX = "devhealth.";

    public Topics {
        Objects.requireNonNull(prefix, "prefix");
    }

    public static Topics withDefaultPrefix() {
        return new Topics(DEFAULT_PREFIX);
    }

    /** DeviceReportEnvelope (DeviceHealthReport or NodeHeartbeat), key = node. */
    public String deviceReports() {
        return prefix + "device-reports";
    }

    /** NodeAllocations snapshots from the kubelet PodResources API, key = node. */
    public String nodeAllocations() {
        return prefix + "node-allocations";
    }

    /** NodeDevices from the node's ResourceSlices, key = node. */
    public String deviceInventory() {
        return prefix + "device-inventory";
    }

    /** PodDeviceStatus, key = namespace/name, compacted. */
    public String podDeviceStatus() {
        return prefix + "pod-device-status";
    }

    /** HealthTransition, key = node/driver/pool/device, append-only. */
    public String healthTransitions() {
        return prefix + "health-transitions";
    }

    /**
     * The optional CloudEvents 1.0 JSON (structured mode) mirror of health-transitions for SIEMs,
     * key = node/driver/pool/device, append-only.
     */
    public String healthTransitionsCloudEvents() {
        return prefix + "health-transitions-cloudevents";
    }

    /** FleetStats, windowed. */
    public String fleetStats() {
        return prefix + "fleet-stats";
    }

    /** DeadLetter records from every stage. */
    public String deadLetters() {
        return prefix + "dlq";
    }

    /** The node-keyed topics the collector writes; they must be co-partitioned. */
    public List<String> collectorTopics() {
        return List.of(deviceReports(), nodeAllocations(), deviceInventory());
    }

    public List<String> all() {
        return List.of(deviceReports(), nodeAllocations(), deviceInventory(), podDeviceStatus(),
                healthTransitions(), healthTransitionsCloudEvents(), fleetStats(), deadLetters());
    }
}
