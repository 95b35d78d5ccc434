package io.devhealth.processor.internals.rules;

import io.devhealth.schema.avro.SourceStatus;
import java.util.Map;

/**
 * Per node: its own clock (the latest {@code observedAt} it sent), the de-duplication watermarks of
 * its three kinds of record, and which sources its latest heartbeat said were up. Immutable.
 *
 * @param nodeTime the node's own time as far as its reports and heartbeats tell (0 before any)
 * @param reports watermark of device reports and heartbeats
 * @param allocations watermark of allocation snapshots
 * @param inventory watermark of inventories
 * @param sources by source name, from the latest heartbeat
 * @param departed pods that left the node's allocations within the termination window, by pod key, at the
 *                 node's time they were first missing ({@code DepartedPods}, in the pods package)
 */
public record NodeState(String cluster, long nodeTime, Watermark reports, Watermark allocations, Watermark inventory,
                        Map<String, Liveness> sources, Map<String, Long> departed) {

    public NodeState {
        reports = reports == null ? Watermark.NONE : reports;
        allocations = allocations == null ? Watermark.NONE : allocations;
        inventory = inventory == null ? Watermark.NONE : inventory;
        sources = sources == null ? Map.of() : Map.copyOf(sources);
        departed = departed == null ? Map.of() : Map.copyOf(departed);
    }

    public static NodeState empty(String cluster) {
        return new NodeState(cluster, 0L, Watermark.NONE, Watermark.NONE, Watermark.NONE, Map.of(), Map.of());
    }
    /** A source's state as the node's heartbeat tells it. */
    public record Liveness(SourceStatus status, long since, String message) {}

    /**
     * The highest (collector epoch, sequence) applied of one kind of record. A collector picks a new,
     * larger epoch at every start and numbers its records from there, so anything at or below the
     * watermark is a duplicate (producer retry, spool replay) or a stale leftover of an earlier run.
     * A collector's epoch is at least 1 and its sequences start at 1: a record without identity
     * (0, 0) is at or below every watermark, {@link #NONE} included.
     */
    public record Watermark(long epoch, long sequence) {
        public static final Watermark NONE = new Watermark(0L, 0L);

        public boolean admits(long epoch, long sequence) {
            return epoch > this.epoch || (epoch == this.epoch && sequence > this.sequence);
        }

        public Watermark advance(long epoch, long sequence) {
            return admits(epoch, sequence) ? new Watermark(epoch, sequence) : this;
        }
    }

    /** This state after a report or heartbeat: its watermark, and the node's clock moved to {@code observedAt} if later. */
    public NodeState withReport(Watermark watermark, long observedAt) {
        return new NodeState(cluster, Math.max(nodeTime, observedAt), watermark, allocations, inventory, sources, departed);
    }

    /** This state after an allocation snapshot: its watermark and the pods that have left since. */
    public NodeState withAllocations(Watermark watermark, Map<String, Long> departedPods) {
        return new NodeState(cluster, nodeTime, reports, watermark, inventory, sources, departedPods);
    }

    public NodeState withInventory(Watermark watermark) {
        return new NodeState(cluster, nodeTime, reports, allocations, watermark, sources, departed);
    }

    public NodeState withSources(Map<String, Liveness> next) {
        return new NodeState(cluster, nodeTime, reports, allocations, inventory, next, departed);
    }

    public NodeState withCluster(String name) {
        return name == null || name.isEmpty() || name.equals(cluster) ? this
                : new NodeState(name, nodeTime, reports, allocations, inventory, sources, departed);
    }

    /** Whether the node's latest heartbeat says {@code sourceName} is down. */
    public boolean isDown(String sourceName) {
        Liveness liveness = sources.get(sourceName);
        return liveness != null && liveness.status() == SourceStatus.DOWN;
    }
}
