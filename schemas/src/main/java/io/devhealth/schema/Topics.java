package io.devhealth.schema;

import java.util.List;
import java.util.Objects;

/**
 * The Kafka topics of the pipeline, all under one configurable prefix (default {@code devhealth.}).
 *
 * <p>Collectors write everything about their node to {@link #nodeEvents()}, keyed by node, so that
 * every fact about one node meets in one Kafka Streams task, in the order the collector accepted it.
 */
public record Topics(String prefix) {

    public static final String DEFAULT_PREFIX = "devhealth.";

    public Topics {
        Objects.requireNonNull(prefix, "prefix");
    }

    public static Topics withDefaultPrefix() {
        return new Topics(DEFAULT_PREFIX);
    }

    /** NodeEvent (a device report, heartbeat, allocation snapshot or inventory), key = node. */
    public String nodeEvents() {
        return prefix + "node-events";
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

    /**
     * TerminatedPod, key = namespace/name, append-only: one verdict per terminated pod with devices,
     * published by the sink when the pod's post-mortem record becomes final.
     */
    public String podVerdicts() {
        return prefix + "pod-verdicts";
    }

    /** FleetStats, windowed. */
    public String fleetStats() {
        return prefix + "fleet-stats";
    }

    /** DeadLetter records from every stage. */
    public String deadLetters() {
        return prefix + "dlq";
    }

    public List<String> all() {
        return List.of(nodeEvents(), podDeviceStatus(), healthTransitions(), healthTransitionsCloudEvents(), podVerdicts(), fleetStats(),
                deadLetters());
    }
}
