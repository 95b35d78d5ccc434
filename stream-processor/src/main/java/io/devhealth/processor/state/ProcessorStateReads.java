package io.devhealth.processor.state;

import io.devhealth.processor.DeviceHealthTopology;
import io.devhealth.processor.internals.fleet.FleetVerdicts;
import io.devhealth.processor.internals.fleet.FleetWindowKeys;
import io.devhealth.processor.internals.node.StoredNode;
import io.devhealth.processor.internals.rules.DeviceState;
import io.devhealth.processor.internals.rules.Flaps;
import io.devhealth.processor.internals.rules.SourceReport;
import io.devhealth.processor.internals.stores.StateKeys;
import io.devhealth.schema.avro.Verdict;
import java.time.Instant;
import java.util.function.BiPredicate;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.query.RangeQuery;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreType;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * The processor's read model: how its stores ({@link DeviceHealthTopology}'s store names) are keyed and what their
 * values say, for readers outside the topology (the query API). The stores' value formats stay the processor's own;
 * a reader gets {@link DeviceNow}, {@link FleetCounts} and the Avro records of the topics.
 *
 * <p>Keys: the pod stores ({@link DeviceHealthTopology#POD_STATUS_STORE}, {@link DeviceHealthTopology#POD_HISTORY_STORE},
 * {@link DeviceHealthTopology#POD_VERDICT_STORE}) by {@link #podKey}; the device history by {@link #deviceKey}; the node
 * and device stores by node, all of one node in one partition.
 */
public final class ProcessorStateReads {

    /** One partition's copy of the processor's stores, as the reader obtained it (an active or a standby copy). */
    public interface PartitionStores {
        <T> T store(String name, QueryableStoreType<T> type);
    }

    private ProcessorStateReads() {}

    public static String podKey(String namespace, String name) {
        return StateKeys.pod(namespace, name);
    }

    public static String deviceKey(String node, String driver, String pool, String device) {
        return StateKeys.device(node, driver, pool, device);
    }

    /** Whether the device is known in this copy of its node's partition. */
    public static boolean knowsDevice(PartitionStores stores, String node, String driver, String pool, String device) {
        ReadOnlyKeyValueStore<String, DeviceState> devices = stores.store(DeviceHealthTopology.DEVICE_STATE_STORE,
                QueryableStoreTypes.keyValueStore());
        return devices.get(deviceKey(node, driver, pool, device)) != null;
    }

    /**
     * Hands the node's devices as they are now to {@code each}, in key order after {@code afterKey} (null: from the
     * first), until it returns false; the key is the device's place in that order. False when this copy does not know
     * the node.
     */
    public static boolean forEachDevice(PartitionStores stores, String node, String afterKey, BiPredicate<String, DeviceNow> each) {
        ReadOnlyKeyValueStore<String, StoredNode> nodes = stores.store(DeviceHealthTopology.NODE_STATE_STORE,
                QueryableStoreTypes.keyValueStore());
        StoredNode nodeState = nodes.get(node);
        if (nodeState == null) {
            return false;
        }
        ReadOnlyKeyValueStore<String, DeviceState> devices = stores.store(DeviceHealthTopology.DEVICE_STATE_STORE,
                QueryableStoreTypes.keyValueStore());
        try (KeyValueIterator<String, DeviceState> entries = devices.prefixScan(node + "/", new StringSerializer())) {
            while (entries.hasNext()) {
                KeyValue<String, DeviceState> entry = entries.next();
                if (afterKey != null && entry.key.compareTo(afterKey) <= 0) {
                    continue;
                }
                // As of the last commit: keep-alives since a device was last written are in its node's value.
                if (!each.test(entry.key, deviceNow(nodeState.device(entry.key, entry.value)))) {
                    break;
                }
            }
        }
        return true;
    }

    /** The range query of {@link DeviceHealthTopology#FLEET_STATS_STORE} over the windows that start in [from, to]. */
    public static RangeQuery<String, FleetCounts> fleetCountsQuery(Instant from, Instant to) {
        return RangeQuery.withRange(FleetWindowKeys.from(Math.max(0L, from.toEpochMilli())),
                FleetWindowKeys.through(Math.max(0L, to.toEpochMilli())));
    }

    /** The {@code DIMENSION:value} a key of {@link DeviceHealthTopology#FLEET_STATS_STORE} counts for. */
    public static String fleetCountsDimension(String storeKey) {
        return FleetWindowKeys.dimensionKey(storeKey);
    }

    /** The {@code DIMENSION:value} a key of {@link DeviceHealthTopology#FLEET_VERDICT_STORE} counts for. */
    public static String fleetVerdictsDimension(String storeKey) {
        return FleetVerdicts.dimensionKey(storeKey);
    }

    /** The verdict a key of {@link DeviceHealthTopology#FLEET_VERDICT_STORE} counts. */
    public static Verdict fleetVerdict(String storeKey) {
        return FleetVerdicts.verdict(storeKey);
    }

    /** A device as its stored state says it is (package-private for its test). */
    static DeviceNow deviceNow(DeviceState state) {
        return new DeviceNow(state.driver(), state.pool(), state.device(), state.uuid(), state.health(), state.message(),
                state.reason(), state.since() == 0 ? null : Instant.ofEpochMilli(state.since()),
                state.sources().values().stream().map(ProcessorStateReads::sourceNow).toList());
    }

    private static DeviceNow.SourceNow sourceNow(SourceReport s) {
        DeviceNow.Hold hold = s.flaps() instanceof Flaps.Held held
                ? new DeviceNow.Hold(Instant.ofEpochMilli(held.since()), held.health(), held.flips(), Instant.ofEpochMilli(held.releaseAt()))
                : null;
        return new DeviceNow.SourceNow(s.kind().name(), s.name(), s.health(), s.message(), s.reason(),
                Instant.ofEpochMilli(s.observedAt()), Instant.ofEpochMilli(s.refreshedAt()), s.timeoutMs(), hold);
    }
}
