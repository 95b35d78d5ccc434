package io.devhealth.processor.internals.rules;

import io.devhealth.schema.HealthWords;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.SourceKind;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * How a device's sources merge into its effective health: a fresh Unhealthy from any source wins; Healthy needs a fresh
 * Healthy and no fresh Unhealthy; otherwise (all stale, or only fresh Unknown) the device is Unknown. What
 * counts of a source is what the device is shown of it ({@link SourceReport#shownHealth()}: its word, or
 * the word a flapping source is held at).
 *
 * <p>Messages: when one source decides, its own message is passed through unchanged (it is what the
 * driver said, and what the kubelet would show); when several do, each is prefixed by its source;
 * when silence decides, the message names the silent source and its timeout.
 */
public final class DeviceHealthMerger {

    /** Reason code of a device whose every source went quiet for longer than its timeout. */
    public static final String REASON_SILENT = "SourceSilent";
    /** Reason code of a device no source has reported yet. */
    public static final String REASON_NEVER_REPORTED = "NoReport";

    private DeviceHealthMerger() {}

    public static EffectiveHealth merge(Collection<SourceReport> sources, long nodeTime) {
        if (sources.size() == 1) {
            // Most devices have one source: the rules below reduce to "its word while fresh", without the lists.
            SourceReport only = sources.iterator().next();
            return only.freshAt(nodeTime) && only.health() != null
                    ? new EffectiveHealth(only.shownHealth(), only.shownMessage(), only.shownReason(), only.kind(), only.changesAt())
                    : silent(sources);
        }
        List<SourceReport> fresh = new ArrayList<>();
        long deadline = Long.MAX_VALUE;
        for (SourceReport source : sources) {
            if (source.freshAt(nodeTime)) {
                fresh.add(source);
                deadline = Math.min(deadline, source.changesAt());
            }
        }
        List<SourceReport> unhealthy = only(fresh, HealthStatus.UNHEALTHY);
        if (!unhealthy.isEmpty()) {
            return decide(HealthStatus.UNHEALTHY, unhealthy, deadline);
        }
        List<SourceReport> healthy = only(fresh, HealthStatus.HEALTHY);
        if (!healthy.isEmpty()) {
            return decide(HealthStatus.HEALTHY, healthy, deadline);
        }
        List<SourceReport> unknown = only(fresh, HealthStatus.UNKNOWN);
        if (!unknown.isEmpty()) {
            return decide(HealthStatus.UNKNOWN, unknown, deadline);
        }
        return silent(sources);
    }

    /**
     * Whether a device's only source, {@code source}, refreshed at {@code refreshedAt}, merges at
     * {@code nodeTime} to what {@code device} shows: the source's own word while it is fresh, as
     * {@link #merge} gives for one source. Answered without merging, for the keep-alives of a fleet's
     * steady state; {@code DeviceRulesTest} checks it against {@link #merge}.
     */
    static boolean keepsWordOfOnlySource(DeviceState device, SourceReport source, long refreshedAt, long nodeTime) {
        return device.sources().size() == 1 && device.since() != 0L && source.health() != null && !source.held()
                && device.health() == source.health() && device.source() == source.kind()
                && Objects.equals(device.message(), source.message()) && Objects.equals(device.reason(), source.reason())
                // Merged while the source was fresh (silence would have set no deadline), and fresh after the refresh.
                && device.deadline() == source.staleAt() && nodeTime < SourceReport.staleAt(refreshedAt, source.timeoutMs());
    }

    /** Most recent first: it names the reason and source of the result. */
    private static final Comparator<SourceReport> MOST_RECENT_FIRST =
            Comparator.comparingLong(SourceReport::observedAt).reversed().thenComparing(SourceReport::key, Comparator.naturalOrder());

    private static List<SourceReport> only(List<SourceReport> sources, HealthStatus health) {
        // A loop, not a stream: this runs for every report, and most devices have one or two sources.
        List<SourceReport> matching = new ArrayList<>(sources.size());
        for (SourceReport source : sources) {
            if (source.shownHealth() == health) {
                matching.add(source);
            }
        }
        if (matching.size() > 1) {
            matching.sort(MOST_RECENT_FIRST);
        }
        return matching;
    }

    private static EffectiveHealth decide(HealthStatus health, List<SourceReport> deciding, long deadline) {
        SourceReport first = deciding.get(0);
        String message;
        if (deciding.size() == 1) {
            message = first.shownMessage();
        } else {
            List<String> parts = new ArrayList<>();
            for (SourceReport source : deciding) {
                parts.add(source.label() + ": " + (source.shownMessage() == null ? HealthWords.of(health) : source.shownMessage()));
            }
            message = String.join("; ", parts);
        }
        return new EffectiveHealth(health, message, first.shownReason(), first.kind(), deadline);
    }

    private static EffectiveHealth silent(Collection<SourceReport> sources) {
        SourceReport latest = sources.stream().max(Comparator.comparingLong(SourceReport::staleAt)).orElse(null);
        if (latest == null) {
            return new EffectiveHealth(HealthStatus.UNKNOWN, "no health reported yet", REASON_NEVER_REPORTED, SourceKind.OTHER,
                    Long.MAX_VALUE);
        }
        String message = "no health report from " + latest.label() + " within its " + (latest.timeoutMs() / 1000)
                + " s timeout (last said: " + HealthWords.of(latest.health())
                + (latest.message() == null ? "" : ", " + latest.message()) + ")";
        return new EffectiveHealth(HealthStatus.UNKNOWN, message, REASON_SILENT, latest.kind(), Long.MAX_VALUE);
    }
}
