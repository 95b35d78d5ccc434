package io.devhealth.sink.taints;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.Set;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fleet-wide circuit breaker of retry elsewhere. Devices of many nodes failing at once is more likely
 * a bug (devhealth's, a driver's, a bad rollout) than broken hardware, and tainting them would take a large
 * part of the fleet out of scheduling. So: when the nodes with a device that needed a rule within
 * {@code window} are more than {@code fraction} of the cluster's nodes, the breaker is open and no rule is
 * created; it closes once, as the window slides, they are no longer more.
 *
 * <p>Counted are the nodes of the rules created within the window (by every sink instance: they come from
 * the API server) and of the demands this instance refused while open, so that a mass event keeps the
 * breaker open for as long as it goes on. Removal of rules does not pass here: a device that is Healthy
 * again is always released.
 *
 * <p>Not resilience4j's CircuitBreaker: that one counts failed calls of one client, this one counts distinct
 * nodes against the size of the cluster.
 */
final class FleetBreaker {

    private static final Logger LOGGER = LoggerFactory.getLogger(FleetBreaker.class);

    private record Demand(String node, Instant at) {
    }

    private final double fraction;
    private final Duration window;
    private final IntConsumer gauge;
    private final Deque<Demand> refused = new ArrayDeque<>();
    private boolean open;

    /** @param gauge told 1 when the breaker opens, 0 when it closes */
    FleetBreaker(double fraction, Duration window, IntConsumer gauge) {
        this.fraction = fraction;
        this.window = window;
        this.gauge = gauge;
        gauge.accept(0);
    }

    /**
     * Whether a rule for a device of {@code node} may be created now.
     *
     * @param recentRuleNodes nodes of the sink's rules created within the window
     * @param nodes the cluster's nodes
     */
    boolean admit(String node, Instant now, Set<String> recentRuleNodes, int nodes) {
        Set<String> demanding = demanding(now, recentRuleNodes);
        demanding.add(node);
        update(demanding.size(), nodes, now);
        if (open) {
            refused.addLast(new Demand(node, now));
        }
        return !open;
    }

    /** Re-evaluates without a new demand: how an open breaker closes when nothing asks. */
    void refresh(Instant now, Set<String> recentRuleNodes, int nodes) {
        update(demanding(now, recentRuleNodes).size(), nodes, now);
    }

    boolean isOpen() {
        return open;
    }

    Duration window() {
        return window;
    }

    private Set<String> demanding(Instant now, Set<String> recentRuleNodes) {
        Instant since = now.minus(window);
        while (!refused.isEmpty() && !refused.peekFirst().at().isAfter(since)) {
            refused.removeFirst();
        }
        Set<String> demanding = new HashSet<>(recentRuleNodes);
        refused.forEach(d -> demanding.add(d.node()));
        return demanding;
    }

    private void update(int demanding, int nodes, Instant now) {
        // A node that reports a device exists even when the count is stale or lacks it.
        int cluster = Math.max(nodes, 1);
        boolean over = demanding > fraction * cluster;
        if (over && !open) {
            open = true;
            gauge.accept(1);
            LOGGER.warn("fleet breaker open: no devicetaintrule is created until fewer nodes need one nodes={} clusterNodes={} "
                    + "fraction={} windowMs={} at={}", demanding, cluster, fraction, window.toMillis(), now);
        } else if (!over && open) {
            open = false;
            gauge.accept(0);
            LOGGER.info("fleet breaker closed nodes={} clusterNodes={} fraction={} windowMs={}", demanding, cluster, fraction,
                    window.toMillis());
        }
    }
}
