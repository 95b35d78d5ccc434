package io.devhealth.processor.internals.rules;

import io.devhealth.schema.avro.DeviceHealthReport;
import java.util.ArrayList;
import java.util.List;

/**
 * What happens to one device: a report applied, silence expired, sources moved from a UUID-only
 * device onto a DRA device. Pure: each rule takes states and returns what they become; the processor
 * stores and forwards the result.
 *
 * <p>The rules underneath have one home each: what a report does to its source's latest word is
 * {@link SourceReport}'s ({@link SourceReport#supersededBy}, {@link SourceReport#after}); how sources
 * merge into the device's effective health is {@link DeviceHealthMerger}'s. Nothing here restates them.
 */
public final class DeviceRules {

    private DeviceRules() {}

    /** What a report did to a device. */
    public sealed interface Outcome permits Unchanged, Refreshed, Changed {}

    /** Nothing changed: a report older than its source's latest evidence, or one that repeats what the device shows. */
    public record Unchanged() implements Outcome {
        static final Unchanged INSTANCE = new Unchanged();
    }

    /**
     * Only how recently the device's sources spoke moved (refresh times, and the deadline with them):
     * what the device shows and since when is as before. A keep-alive, nearly always.
     */
    public record Refreshed(DeviceState next) implements Outcome {}

    /** Anything else: a source's word, the effective health, its message or reason. */
    public record Changed(DeviceState next) implements Outcome {}

    /**
     * Applies {@code report} to {@code device} (its state as it is now; {@link DeviceState#empty} for a
     * device seen for the first time).
     *
     * @param observedAt the report's node time
     * @param timeoutMs how long the report stays fresh
     * @param node the node's state after this report: its clock, and which sources its heartbeat says are down
     * @param flapLimits when the report's source counts as flapping ({@link Flaps})
     */
    public static Outcome apply(DeviceState device, DeviceHealthReport report, long observedAt, long timeoutMs, NodeState node,
                                FlapLimits flapLimits) {
        SourceReport known = device.source(report.getSource(), report.getSourceName());
        if (known != null && !known.supersededBy(observedAt)) {
            return Unchanged.INSTANCE;
        }
        // Most reports: a keep-alive of a device's only source. The source's rule and the merge's say
        // "only the refresh time moves" without building and comparing the merged state.
        boolean sourceDown = node.isDown(report.getSourceName());
        if (known != null && known.onlyRefreshedBy(report, timeoutMs, sourceDown)) {
            long refreshedAt = Math.max(known.refreshedAt(), observedAt);
            if (DeviceHealthMerger.keepsWordOfOnlySource(device, known, refreshedAt, node.nodeTime())) {
                return refreshedAt == known.refreshedAt() ? Unchanged.INSTANCE
                        : new Refreshed(device.withOnlySourceRefreshed(refreshedAt));
            }
        }
        return general(device, report, known, observedAt, timeoutMs, node, sourceDown, flapLimits);
    }

    /** {@link #apply} for any report: the source's word after it, merged, compared with the device before. */
    static Outcome general(DeviceState device, DeviceHealthReport report, SourceReport known, long observedAt, long timeoutMs,
                           NodeState node, boolean sourceDown, FlapLimits flapLimits) {
        SourceReport next = SourceReport.after(report, known, observedAt, timeoutMs, sourceDown, flapLimits);
        DeviceState merged = device.withSourceMerged(next, node.nodeTime(), observedAt);
        if (merged.equals(device)) {
            return Unchanged.INSTANCE; // e.g. a keep-alive from a source the node says is down
        }
        return device.becomesWithRefresh(merged) ? new Refreshed(merged) : new Changed(merged);
    }

    /** A device's state after silence: the sources merged again at a deadline that passed. */
    public record Expiry(long at, DeviceState next) {}

    /**
     * Every change time alone makes to {@code device} up to {@code nodeNow}, in order, each at its own
     * deadline: a source goes silent (a device whose sources go quiet one after another changes once
     * per source), or a flapping source's hold ends ({@link Flaps}).
     */
    public static List<Expiry> expire(DeviceState device, long nodeNow) {
        List<Expiry> steps = new ArrayList<>(1);
        DeviceState current = device;
        while (current.deadline() <= nodeNow) {
            long at = current.deadline();
            current = current.withSourcesAt(at);
            current = current.withEffective(DeviceHealthMerger.merge(current.sources().values(), at), at);
            steps.add(new Expiry(at, current));
        }
        return steps;
    }

    /**
     * Whether {@code previous} becoming {@code next} is a health transition: the health changed, or a
     * flap-damping hold started or ended (the SIEM feed and the history say the device is, or no
     * longer is, damped, even where the health it shows stays the same).
     */
    public static boolean isTransition(DeviceState previous, DeviceState next) {
        return previous.health() != next.health() || previous.damped() != next.damped();
    }

    /**
     * {@code target} (a DRA device) with the sources of {@code uuidOnly} (what was reported under the
     * device's GPU UUID before the node's inventory named the device), each where it is at least as
     * recent as the target's own word of that source, merged at {@code nodeNow}: exactly as if those
     * reports had arrived after the inventory.
     */
    public static DeviceState remap(DeviceState target, DeviceState uuidOnly, long nodeNow) {
        DeviceState merged = target;
        for (SourceReport source : uuidOnly.sources().values()) {
            SourceReport known = merged.sources().get(source.key());
            if (known == null || known.observedAt() <= source.observedAt()) {
                merged = merged.withSource(source);
            }
        }
        return merged.withEffective(DeviceHealthMerger.merge(merged.sources().values(), nodeNow), nodeNow);
    }
}
