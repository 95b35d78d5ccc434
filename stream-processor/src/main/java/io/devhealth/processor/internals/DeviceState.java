package io.devhealth.processor.internals;

import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.SourceKind;
import java.util.Map;
import java.util.TreeMap;

/**
 * Everything the processor knows about one device on one node: the latest report of every source
 * and the effective health merged from them (DESIGN §4.1). Value of the {@code device-state} store.
 *
 * @param sources by {@link SourceReport#key()}, sorted so that merges and messages are deterministic
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

    public DeviceState {
        sources = sources == null ? new TreeMap<>() : new TreeMap<>(sources);
    }

    public static DeviceState empty(String cluster, String node, DeviceRef ref) {
        return new DeviceState(cluster, node, ref.getDriver(), ref.getPool(), ref.getDevice(), ref.getUuid(), Map.of(),
                HealthStatus.UNKNOWN, null, null, SourceKind.OTHER, 0L, Long.MAX_VALUE);
    }

    public DeviceRef ref() {
        return DeviceRef.newBuilder().setDriver(driver).setPool(pool).setDevice(device).setUuid(uuid).build();
    }

    public DeviceState withSource(SourceReport report) {
        Map<String, SourceReport> next = new TreeMap<>(sources);
        next.put(report.key(), report);
        return new DeviceState(cluster, node, driver, pool, device, uuid, next, health, message, reason, source, since, deadline);
    }

    /** This state with the merged health applied; {@code since} moves only when the health does. */
    public DeviceState withEffective(EffectiveHealth effective, long at) {
        long nextSince = effective.health() == health && since != 0L ? since : at;
        return new DeviceState(cluster, node, driver, pool, device, uuid, sources, effective.health(), effective.message(),
                effective.reason(), effective.source(), nextSince, effective.deadline());
    }
}
