package io.devhealth.processor.internals.stores;

/**
 * The names of the processors' stores and the node processor's output children. They live here, in the package
 * every processor that uses them imports, so that internals never import the topology; {@code DeviceHealthTopology}
 * publishes them to callers (queries, tests).
 */
public final class TopologyNames {

    public static final String DEVICE_STATE_STORE = "device-state";
    public static final String NODE_STATE_STORE = "node-state";
    public static final String NODE_ALLOCATIONS_STORE = "node-allocations";
    public static final String NODE_INVENTORY_STORE = "node-inventory";
    /** The last status each node emitted for each of its pods, by node and pod ({@link StateKeys#nodePod}). */
    public static final String NODE_POD_STATUS_STORE = "node-pod-status";
    public static final String DEVICE_HISTORY_STORE = "device-history";
    /** Each pod's accepted latest status, which names the node holding the pod ({@code PodClaims}). */
    public static final String POD_STATUS_STORE = "pod-status";
    /** Every accepted status per pod, by the time it was emitted ({@code PodClaims}). */
    public static final String POD_HISTORY_STORE = "pod-history";
    /** The fleet counter's store ({@code FleetCounter}). */
    public static final String FLEET_STATS_STORE = "fleet-stats";
    /** The fleet combiner's store ({@code FleetCombiner}). */
    public static final String FLEET_PENDING_STORE = "fleet-pending";

    /** Every terminated pod's verdict, by pod, as of when it became final ({@code VerdictRecorder}). */
    public static final String POD_VERDICT_STORE = "pod-verdicts";
    /** Verdicts counted per fleet dimension and window. */
    public static final String FLEET_VERDICT_STORE = "fleet-verdicts";

    /** The child the node processor forwards pod statuses to. */
    public static final String POD_STATUS_SINK = "pod-device-status-sink";
    /** The child the node processor forwards health transitions to. */
    public static final String TRANSITIONS_SINK = "health-transitions-sink";

    private TopologyNames() {}
}
