package io.devhealth.sink.taints;

import io.devhealth.sink.SinkConfig;
import java.time.Duration;

/**
 * The retry-elsewhere settings ({@code taint.rules.*} in {@link SinkConfig}).
 *
 * @param enabled whether the sink creates DeviceTaintRules at all
 * @param dryRun decide, log and count, but write nothing
 * @param groupId consumer group of the health-transitions consumer
 * @param minHold how long a rule stays at least after it was created
 * @param maxPerNode most devices of one node tainted at once
 * @param breakerNodeFraction the fleet breaker opens when more than this fraction of nodes needed a rule within the window
 * @param breakerWindow the window of the fleet breaker
 */
public record TaintRuleSettings(boolean enabled, boolean dryRun, String groupId, Duration minHold, int maxPerNode,
                                double breakerNodeFraction, Duration breakerWindow) {
}
