package io.devhealth.processor.internals.node;

import io.devhealth.processor.internals.fleet.FleetDimensions;
import io.devhealth.schema.avro.HealthStatus;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The gauges the processor keeps from its state, as its devices and nodes change (never by scanning the
 * stores when scraped):
 * <ul>
 *   <li>{@code devhealth_processor_devices{cluster,node,driver,product,health}}: devices by effective health;</li>
 *   <li>{@code devhealth_processor_node_last_record_timestamp_seconds{cluster,node}}: the node's own time of the
 *       latest report or heartbeat its collector sent (a node whose collector went silent stops moving).</li>
 * </ul>
 *
 * <p>One per processor instance, shared by its tasks. Each task counts the nodes of its partitions
 * through a {@link Tally} of its own, which it withdraws when it closes or reads its state again: a
 * node that moved to another instance is then shown by that instance alone. A series whose count
 * returns to zero is removed, so the series are those of the devices and nodes this instance owns now.
 *
 * <p>No label names a pod: these are fleet-wide series, bounded by nodes × drivers × products × 3.
 */
public final class StateGauges {

    static final String DEVICES = "devhealth.processor.devices";
    static final String NODE_LAST_RECORD = "devhealth.processor.node.last.record.timestamp.seconds";

    private final MeterRegistry registry;
    private final Map<DeviceGroup, Count> devices = new HashMap<>();
    private final Map<String, NodeClock> nodes = new HashMap<>();

    public StateGauges(MeterRegistry registry) {
        this.registry = registry;
    }

    /** A new task's share of the counts. */
    public Tally tally() {
        return new Tally();
    }

    /** Devices counted together: one series of {@code devhealth_processor_devices}. */
    record DeviceGroup(String cluster, String node, String driver, String product, HealthStatus health) {
        DeviceGroup {
            cluster = cluster == null ? "" : cluster;
            driver = driver == null || driver.isEmpty() ? FleetDimensions.UNKNOWN : driver;
            product = product == null || product.isEmpty() ? FleetDimensions.UNKNOWN : product;
        }
    }

    private synchronized void add(DeviceGroup group, long delta) {
        Count count = devices.get(group);
        if (count == null) {
            count = new Count();
            count.gauge = Gauge.builder(DEVICES, count.value, AtomicLong::get)
                    .description("Devices by effective health, as the processor's state has them now")
                    .tag("cluster", group.cluster())
                    .tag("node", group.node())
                    .tag("driver", group.driver())
                    .tag("product", group.product())
                    .tag("health", group.health().name().toLowerCase(Locale.ROOT))
                    .strongReference(true)
                    .register(registry);
            devices.put(group, count);
        }
        if (count.value.addAndGet(delta) <= 0) {
            registry.remove(count.gauge);
            devices.remove(group);
        }
    }

    private synchronized NodeClock nodeClock(String cluster, String node) {
        NodeClock clock = nodes.get(node);
        if (clock == null) {
            clock = new NodeClock();
            clock.gauge = Gauge.builder(NODE_LAST_RECORD, clock.millis, millis -> millis.get() / 1000.0)
                    .description("The node's own time of the latest report or heartbeat from its collector")
                    .tag("cluster", cluster == null ? "" : cluster)
                    .tag("node", node)
                    .strongReference(true)
                    .register(registry);
            nodes.put(node, clock);
        }
        // A task handing a node over on this instance may withdraw after the next owner took it up.
        clock.owners++;
        return clock;
    }

    private synchronized void removeNode(String node, NodeClock clock) {
        if (--clock.owners == 0 && nodes.remove(node, clock)) {
            registry.remove(clock.gauge);
        }
    }

    /**
     * One task's counts: what it added to the instance's gauges, so that it can take exactly that back.
     * Stream thread only (one per task).
     */
    public final class Tally {
        private final Map<DeviceGroup, long[]> mine = new HashMap<>();
        private final Map<String, NodeClock> myNodes = new HashMap<>();

        private Tally() {}

        /** Counts one device in {@code group}; null counts nothing. */
        void add(DeviceGroup group) {
            move(null, group);
        }

        /** One device leaves {@code from} for {@code to}; either may be null (a device appearing or leaving). */
        void move(DeviceGroup from, DeviceGroup to) {
            if (from != null && from.equals(to)) {
                return;
            }
            if (from != null) {
                long[] count = mine.get(from);
                if (count != null && --count[0] == 0) {
                    mine.remove(from);
                }
                StateGauges.this.add(from, -1);
            }
            if (to != null) {
                mine.computeIfAbsent(to, g -> new long[1])[0]++;
                StateGauges.this.add(to, 1);
            }
        }

        /**
         * Where to set the node's own time of its latest record (epoch milliseconds), shown until this
         * task withdraws: its caller keeps it, so that a record costs no look-up.
         */
        AtomicLong nodeTime(String cluster, String node) {
            NodeClock clock = myNodes.get(node);
            if (clock == null) {
                clock = nodeClock(cluster, node);
                myNodes.put(node, clock);
            }
            return clock.millis;
        }

        /** Takes back everything this task counted. */
        void withdraw() {
            mine.forEach((group, count) -> StateGauges.this.add(group, -count[0]));
            mine.clear();
            myNodes.forEach(StateGauges.this::removeNode);
            myNodes.clear();
        }
    }

    private static final class Count {
        final AtomicLong value = new AtomicLong();
        Gauge gauge;
    }

    private static final class NodeClock {
        final AtomicLong millis = new AtomicLong();
        Gauge gauge;
        /** The tasks showing the node: one, but for a moment during a hand-over. */
        int owners;
    }
}
