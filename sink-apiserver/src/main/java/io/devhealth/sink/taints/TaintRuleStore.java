package io.devhealth.sink.taints;

import java.time.Instant;
import java.util.List;

/**
 * Where the sink's DeviceTaintRules live: the API server ({@link KubernetesTaintRules}) or, in dry-run,
 * this instance's memory ({@link DryRunTaintRules}). {@link TaintRuleController} decides the same way
 * against either.
 */
interface TaintRuleStore {

    /** One of the sink's rules: the device it selects and when it was created. */
    record Rule(TaintedDevice device, Instant createdAt) {
    }

    /** Every rule the sink created (all instances'), and no one else's. */
    List<Rule> list();

    /**
     * Creates the rule of {@code device}; when it exists already (another instance, or before a restart)
     * that one is returned and nothing is changed.
     */
    Rule create(TaintedDevice device, Instant now, String reason);

    /** Deletes the rule of {@code device}; one already gone is fine. */
    void delete(TaintedDevice device);

    /** Whether the device's own ResourceSlice entry carries a taint that keeps the scheduler off it. */
    boolean taintedBySlice(TaintedDevice device);

    /** The nodes of the cluster, for the fleet breaker's fraction. */
    int nodeCount();

    /** Whether rules are written (false: dry-run). */
    boolean writes();
}
