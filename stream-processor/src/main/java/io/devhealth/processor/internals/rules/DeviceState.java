package io.devhealth.processor.internals.rules;

import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.SourceKind;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Everything the processor knows about one device on one node: the latest report of every source
 * and the effective health merged from them ({@link DeviceHealthMerger}). Value of the {@code device-state} store.
 *
 * @param sources by {@link SourceReport#key()}, iterated in key order so that merges and messages are deterministic
 * @param since node time at which {@code health} became what it is
 * @param deadline node time at which the effective health may change through silence alone
 *                 ({@link Long#MAX_VALUE}: never, every source is already stale)
 */
public record DeviceState(
        String cluster,
        String node,
        String driver,
        String pool,
        String device,
        String uuid,
        Map<String, SourceReport> sources,
        HealthStatus health,
        String message,
        String reason,
        SourceKind source,
        long since,
        long deadline) {

    /** The class of the read-only sorted view this record keeps, so that passing one on is not a copy. */
    private static final Class<?> FROZEN = Collections.unmodifiableNavigableMap(new TreeMap<>()).getClass();
    /** The class of a one-entry {@code Map.of}: most devices have one source, and a tree for one entry was most of a keep-alive's garbage. */
    private static final Class<?> SINGLE = Map.of("", "").getClass();

    public DeviceState {
        sources = frozen(sources);
    }

    private static Map<String, SourceReport> frozen(Map<String, SourceReport> sources) {
        if (sources == null || sources.isEmpty()) {
            return Map.of();
        }
        if (sources.getClass() == FROZEN || sources.getClass() == SINGLE) {
            return sources; // already a read-only copy made here: every with...() passes it on
        }
        if (sources.size() == 1) {
            Map.Entry<String, SourceReport> only = sources.entrySet().iterator().next();
            return Map.of(only.getKey(), only.getValue());
        }
        return Collections.unmodifiableNavigableMap(new TreeMap<>(sources));
    }

    public static DeviceState empty(String cluster, String node, DeviceRef ref) {
        return new DeviceState(cluster, node, ref.getDriver(), ref.getPool(), ref.getDevice(), ref.getUuid(), Map.of(),
                HealthStatus.UNKNOWN, null, null, SourceKind.OTHER, 0L, Long.MAX_VALUE);
    }

    /**
     * Whether flap damping decides what this device shows: its reason is the hold's and one of its
     * sources is held (a source's own reason of that name alone does not make a device damped).
     */
    public boolean damped() {
        return hold().isPresent();
    }

    /** The hold that decides what this device shows, while flap damping does ({@link #damped()}). */
    public Optional<Flaps.Held> hold() {
        if (Flaps.REASON_FLAPPING.equals(reason)) {
            for (SourceReport known : sources.values()) {
                if (known.flaps() instanceof Flaps.Held held && known.shownHealth() == health) {
                    return Optional.of(held);
                }
            }
        }
        return Optional.empty();
    }

    public DeviceRef ref() {
        return DeviceRef.newBuilder().setDriver(driver).setPool(pool).setDevice(device).setUuid(uuid).build();
    }

    /**
     * The latest word of source ({@code kind}, {@code name}), or null. Looked up without building its
     * map key: it runs for every report, and a device has one or two sources.
     */
    public SourceReport source(SourceKind kind, String name) {
        Map.Entry<String, SourceReport> known = entryOf(kind, name);
        return known == null ? null : known.getValue();
    }

    private Map.Entry<String, SourceReport> entryOf(SourceKind kind, String name) {
        for (Map.Entry<String, SourceReport> known : sources.entrySet()) {
            if (known.getValue().kind() == kind && Objects.equals(known.getValue().name(), name)) {
                return known;
            }
        }
        return null;
    }

    public DeviceState withSource(SourceReport report) {
        return new DeviceState(cluster, node, driver, pool, device, uuid, sourcesWith(report), health, message, reason, source, since,
                deadline);
    }

    /**
     * This state with {@code report} as its source's latest word and the health the sources merge to
     * at {@code nodeTime} ({@link DeviceHealthMerger}) applied at {@code at}: {@code withSource} then
     * {@code withEffective}, as one new state instead of two (this runs for every report).
     */
    public DeviceState withSourceMerged(SourceReport report, long nodeTime, long at) {
        Map<String, SourceReport> nextSources = sourcesWith(report);
        return withEffective(nextSources, DeviceHealthMerger.merge(nextSources.values(), nodeTime), at);
    }

    /** The sources with {@code report} in its source's place; the key of a source already known is reused, not built again. */
    private Map<String, SourceReport> sourcesWith(SourceReport report) {
        Map.Entry<String, SourceReport> known = entryOf(report.kind(), report.name());
        if (sources.isEmpty()) {
            return Map.of(report.key(), report);
        }
        if (known != null && sources.size() == 1) {
            return Map.of(known.getKey(), report);
        }
        TreeMap<String, SourceReport> next = new TreeMap<>(sources);
        next.put(known != null ? known.getKey() : report.key(), report);
        return Collections.unmodifiableNavigableMap(next);
    }

    /**
     * This state with the keep-alives of {@code refresh} applied: each source's refresh time and the
     * deadline. A refresh that is not newer than this state for any source (one left over from before
     * this state was written) changes nothing.
     */
    public DeviceState withRefresh(PendingRefresh refresh) {
        TreeMap<String, SourceReport> next = null;
        for (Map.Entry<String, Long> time : refresh.refreshedAt().entrySet()) {
            SourceReport known = sources.get(time.getKey());
            if (known != null && time.getValue() > known.refreshedAt()) {
                if (next == null) {
                    next = new TreeMap<>(sources);
                }
                next.put(time.getKey(), known.withRefreshedAt(time.getValue()));
            }
        }
        return next == null ? this : new DeviceState(cluster, node, driver, pool, device, uuid, Collections.unmodifiableNavigableMap(next),
                health, message, reason, source, since, refresh.deadline());
    }

    /**
     * This state, which has one source, with that source refreshed at {@code refreshedAt} and the deadline
     * it then has: what the merge gives when the source's word stands ({@link DeviceHealthMerger#keepsWordOfOnlySource}).
     */
    DeviceState withOnlySourceRefreshed(long refreshedAt) {
        Map.Entry<String, SourceReport> only = sources.entrySet().iterator().next();
        SourceReport refreshed = only.getValue().withRefreshedAt(refreshedAt);
        return new DeviceState(cluster, node, driver, pool, device, uuid, Map.of(only.getKey(), refreshed), health, message, reason,
                source, since, refreshed.staleAt());
    }

    /** Whether {@code next} is this state with nothing changed but its sources' refresh times and its deadline. */
    public boolean onlyRefreshedIn(DeviceState next) {
        return !next.equals(this) && becomesWithRefresh(next);
    }

    /**
     * Whether {@code next}'s refresh times and deadline, applied to this state ({@link #withRefresh}),
     * give {@code next}: the same device, health and sources but for refresh times that only moved
     * forward; the deadline may differ only where one of them did. Compared field by field, without
     * building the refreshed state: this runs for every keep-alive.
     */
    boolean becomesWithRefresh(DeviceState next) {
        if (health != next.health || source != next.source || since != next.since
                || !Objects.equals(cluster, next.cluster) || !Objects.equals(node, next.node) || !Objects.equals(driver, next.driver)
                || !Objects.equals(pool, next.pool) || !Objects.equals(device, next.device) || !Objects.equals(uuid, next.uuid)
                || !Objects.equals(message, next.message) || !Objects.equals(reason, next.reason)
                || sources.size() != next.sources.size()) {
            return false;
        }
        boolean refreshed = false;
        for (Map.Entry<String, SourceReport> entry : next.sources.entrySet()) {
            SourceReport mine = sources.get(entry.getKey());
            SourceReport theirs = entry.getValue();
            if (mine == null || theirs.refreshedAt() < mine.refreshedAt() || !mine.withRefreshedAt(theirs.refreshedAt()).equals(theirs)) {
                return false;
            }
            refreshed |= theirs.refreshedAt() > mine.refreshedAt();
        }
        // withRefresh keeps this state's deadline unless some refresh time moved.
        return refreshed || deadline == next.deadline;
    }

    /** This state with every source as it is at node time {@code at} ({@link SourceReport#at}: holds that are over dropped). */
    DeviceState withSourcesAt(long at) {
        TreeMap<String, SourceReport> next = null;
        for (Map.Entry<String, SourceReport> entry : sources.entrySet()) {
            SourceReport now = entry.getValue().at(at);
            if (now != entry.getValue()) {
                if (next == null) {
                    next = new TreeMap<>(sources);
                }
                next.put(entry.getKey(), now);
            }
        }
        return next == null ? this : new DeviceState(cluster, node, driver, pool, device, uuid, next, health, message, reason, source,
                since, deadline);
    }

    /** This state with the merged health applied; {@code since} moves only when the health does. */
    public DeviceState withEffective(EffectiveHealth effective, long at) {
        return withEffective(sources, effective, at);
    }

    private DeviceState withEffective(Map<String, SourceReport> nextSources, EffectiveHealth effective, long at) {
        long nextSince = effective.health() == health && since != 0L ? since : at;
        return new DeviceState(cluster, node, driver, pool, device, uuid, nextSources, effective.health(), effective.message(),
                effective.reason(), effective.source(), nextSince, effective.deadline());
    }
}
