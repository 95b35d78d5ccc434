package io.devhealth.query.state;

import io.devhealth.processor.DeviceHealthTopology;
import io.devhealth.processor.state.FleetCounts;
import io.devhealth.processor.state.ProcessorStateReads;
import io.devhealth.processor.state.ProcessorStateReads.PartitionStores;
import io.devhealth.query.access.ExpiringCache;
import io.devhealth.query.http.PageTokens;
import io.devhealth.query.http.QueryException;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.TerminatedPod;
import io.devhealth.schema.avro.Verdict;
import io.devhealth.schema.serde.Encoded;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.StreamPartitioner;
import org.apache.kafka.streams.query.FailureReason;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.query.RangeQuery;
import org.apache.kafka.streams.query.StateQueryRequest;
import org.apache.kafka.streams.query.StateQueryResult;
import org.apache.kafka.streams.query.WindowRangeQuery;
import org.apache.kafka.streams.state.HostInfo;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreType;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.ReadOnlyWindowStore;
import org.apache.kafka.streams.state.ValueAndTimestamp;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * Answers queries from the stores of this instance only; {@code QueryServer} routes to the instance that owns a key.
 * Two kinds: one reads the active copies of partitions only ({@link #active}); the other ({@link #standby}) reads
 * whichever copy this instance keeps, standby or active, once that copy is within a bound of its changelog's end,
 * for {@code StandbyReads}. The fleet sums read the active copies here unless asked for named partitions: a partition
 * counted from a standby as well as from its active copy would count twice, so only the instance gathering a summary
 * may name a standby's partitions ({@code FleetPartitions}).
 */
public final class LocalStateQueries implements StateQueries {

    private static final long ACTIVE_ONLY = -1L;
    /**
     * How long the standby copies' lags are reused: each fetch asks the broker for every changelog's end, and a query
     * reads two or three stores. A lag that old is still well within any sensible bound.
     */
    private static final Duration LAG_TTL = Duration.ofMillis(500);
    private static final String ALL_STORES = "all";

    private final KafkaStreams streams;
    private final PageTokens pageTokens;
    private final HostInfo self;
    /** The most changelog records a copy read here may lack; {@link #ACTIVE_ONLY} reads the active copies only. */
    private final long maxLagRecords;
    private final ExpiringCache<String, Map<String, Map<Integer, CopyLag>>> lags = new ExpiringCache<>(1, LAG_TTL, Clock.systemUTC());
    private final CommittedEnds committedEnds;
    /** Every fetch of the lags passes through it: which copies here have finished restoring since they began here. */
    private final RestoredCopies restoredCopies = new RestoredCopies();

    private LocalStateQueries(KafkaStreams streams, CommittedEnds committedEnds, PageTokens pageTokens, HostInfo self,
                              long maxLagRecords) {
        this.streams = streams;
        this.committedEnds = committedEnds;
        this.pageTokens = pageTokens;
        this.self = self;
        this.maxLagRecords = maxLagRecords;
    }

    public static LocalStateQueries active(KafkaStreams streams, PageTokens pageTokens, HostInfo self) {
        return new LocalStateQueries(streams, null, pageTokens, self, ACTIVE_ONLY);
    }

    /** Reads this instance's copy of a key's partition, standby or active, while it lacks at most {@code maxLagRecords}. */
    public static LocalStateQueries standby(KafkaStreams streams, CommittedEnds committedEnds, PageTokens pageTokens, HostInfo self,
                                     long maxLagRecords) {
        return new LocalStateQueries(streams, committedEnds, pageTokens, self, maxLagRecords);
    }

    private boolean standbyCopies() {
        return maxLagRecords != ACTIVE_ONLY;
    }

    @Override
    public Optional<QueryViews.PodDevices> pod(String namespace, String name, Instant at) {
        String key = ProcessorStateReads.podKey(namespace, name);
        int partition = partitionOf(DeviceHealthTopology.POD_STATUS_STORE, key, "pod");
        if (at == null) {
            ReadOnlyKeyValueStore<String, Encoded<PodDeviceStatus>> latest = partitionStore(DeviceHealthTopology.POD_STATUS_STORE,
                    QueryableStoreTypes.keyValueStore(), partition);
            return Optional.ofNullable(latest.get(key)).map(status -> QueryViews.pod(status.value(), null));
        }
        ReadOnlyWindowStore<String, Encoded<PodDeviceStatus>> history = partitionStore(DeviceHealthTopology.POD_HISTORY_STORE,
                QueryableStoreTypes.windowStore(), partition);
        try (WindowStoreIterator<Encoded<PodDeviceStatus>> asOf = history.backwardFetch(key, Instant.EPOCH, at)) {
            if (asOf.hasNext()) {
                return Optional.of(QueryViews.pod(asOf.next().value.value(), at));
            }
        }
        return Optional.empty();
    }

    @Override
    public Optional<QueryViews.DeviceHistory> deviceHistory(String node, String driver, String pool, String device, Instant from, Instant to,
                                                     int limit, String token) {
        String key = ProcessorStateReads.deviceKey(node, driver, pool, device);
        // The token is bound to this device: one from another device's history is rejected, not misapplied.
        PageTokens.HistoryPosition resume = token == null ? null : pageTokens.parseHistory(key, token);
        long start = resume == null ? from.toEpochMilli() : Math.max(from.toEpochMilli(), resume.timestamp());
        int partition = nodePartition(node);
        ReadOnlyWindowStore<String, Encoded<HealthTransition>> history = partitionStore(DeviceHealthTopology.DEVICE_HISTORY_STORE,
                QueryableStoreTypes.windowStore(), partition);
        List<QueryViews.Transition> items = new ArrayList<>();
        String next = null;
        long runTimestamp = Long.MIN_VALUE;
        int runLength = 0;
        long lastTimestamp = 0;
        int lastRun = 0;
        try (WindowStoreIterator<Encoded<HealthTransition>> entries = history.fetch(key, Instant.ofEpochMilli(start), to)) {
            while (entries.hasNext()) {
                KeyValue<Long, Encoded<HealthTransition>> entry = entries.next();
                runLength = entry.key == runTimestamp ? runLength + 1 : 1;
                runTimestamp = entry.key;
                if (resume != null && entry.key == resume.timestamp() && runLength <= resume.skip()) {
                    continue;
                }
                if (items.size() == limit) {
                    next = pageTokens.history(key, lastTimestamp, lastRun);
                    break;
                }
                items.add(QueryViews.transition(entry.value.value()));
                lastTimestamp = entry.key;
                lastRun = runLength;
            }
        }
        if (items.isEmpty() && token == null && !ProcessorStateReads.knowsDevice(partition(partition), node, driver, pool, device)) {
            return Optional.empty();
        }
        return Optional.of(new QueryViews.DeviceHistory(node, driver, pool, device, from.toString(), to.toString(), items, next));
    }

    @Override
    public Optional<QueryViews.NodeDevices> nodeDevices(String node, int limit, String token) {
        int partition = nodePartition(node);
        String after = token == null ? null : pageTokens.parseAfterKey(node, token);
        List<QueryViews.NodeDevice> items = new ArrayList<>();
        String[] next = {null};
        String[] lastKey = {null};
        boolean known = ProcessorStateReads.forEachDevice(partition(partition), node, after, (key, device) -> {
            if (items.size() == limit) {
                next[0] = pageTokens.afterKey(node, lastKey[0]);
                return false;
            }
            items.add(QueryViews.nodeDevice(device));
            lastKey[0] = key;
            return true;
        });
        return known ? Optional.of(new QueryViews.NodeDevices(node, items, next[0])) : Optional.empty();
    }

    /**
     * Transition counts of the windows that start in [from, to], summed per {@code DIMENSION:value}, from this instance's
     * copies of {@code partitions} (null: every partition active here).
     *
     * <p>One range scan of the time-first store ({@link ProcessorStateReads#fleetCountsQuery}): only the windows asked for are read.
     */
    @Override
    public Map<String, FleetCounts> fleetCounts(Instant from, Instant to, Set<Integer> partitions) {
        Map<String, FleetCounts> sums = new TreeMap<>();
        for (KeyValueIterator<String, FleetCounts> part : fleetParts(DeviceHealthTopology.FLEET_STATS_STORE,
                ProcessorStateReads.fleetCountsQuery(from, to), partitions)) {
            try (KeyValueIterator<String, FleetCounts> entries = part) {
                entries.forEachRemaining(entry -> sums.merge(ProcessorStateReads.fleetCountsDimension(entry.key), entry.value, FleetCounts::plus));
            }
        }
        return sums;
    }

    @Override
    public Optional<QueryViews.PodVerdict> verdict(String namespace, String name, Instant at) {
        // The active copies are read across partitions (a forwarded request may find the verdict moved: "none here");
        // a standby copy only by the key's partition, once it is found close enough to its changelog's end.
        ReadOnlyWindowStore<String, TerminatedPod> verdicts = standbyCopies()
                ? partitionStore(DeviceHealthTopology.POD_VERDICT_STORE, QueryableStoreTypes.windowStore(),
                        partitionOf(DeviceHealthTopology.POD_VERDICT_STORE, ProcessorStateReads.podKey(namespace, name), "pod verdict"))
                : store(DeviceHealthTopology.POD_VERDICT_STORE, QueryableStoreTypes.windowStore());
        Instant until = at == null ? Instant.ofEpochMilli(Long.MAX_VALUE) : at;
        try (WindowStoreIterator<TerminatedPod> latest = verdicts.backwardFetch(ProcessorStateReads.podKey(namespace, name), Instant.EPOCH, until)) {
            return latest.hasNext() ? Optional.of(QueryViews.verdict(latest.next().value)) : Optional.empty();
        }
    }

    @Override
    public Map<String, Map<Verdict, Long>> fleetVerdicts(Instant from, Instant to, Set<Integer> partitions) {
        Map<String, Map<Verdict, Long>> sums = new TreeMap<>();
        // A count the DSL materialized: its window store is timestamped, and IQv2 answers with the timestamps.
        for (KeyValueIterator<Windowed<String>, ValueAndTimestamp<Long>> part : fleetParts(DeviceHealthTopology.FLEET_VERDICT_STORE,
                WindowRangeQuery.<String, ValueAndTimestamp<Long>>withWindowStartRange(from, to), partitions)) {
            try (KeyValueIterator<Windowed<String>, ValueAndTimestamp<Long>> entries = part) {
                entries.forEachRemaining(entry -> sums.computeIfAbsent(ProcessorStateReads.fleetVerdictsDimension(entry.key.key()),
                        k -> new EnumMap<>(Verdict.class)).merge(ProcessorStateReads.fleetVerdict(entry.key.key()), entry.value.value(), Long::sum));
            }
        }
        return sums;
    }

    /**
     * The results of {@code query} over this instance's copies of {@code partitions} of a fleet store, through an
     * interactive query v2, so that a partition in the middle of a rebalance fails the request (503) rather than giving
     * a partial sum. Without partitions: every copy active here. A query without partitions reaches every local copy,
     * standbys too (num.standby.replicas, as deployed): those answer {@link FailureReason#NOT_ACTIVE} and are skipped,
     * since the instance where the partition is active counts it. With partitions, each must answer: from its active
     * copy, or with standby reads from any copy here that is close enough to its changelog's end.
     */
    private <R> List<R> fleetParts(String store, Query<R> query, Set<Integer> partitions) {
        if (partitions != null && partitions.isEmpty()) {
            return List.of();
        }
        StateQueryRequest<R> request = StateQueryRequest.inStore(store).withQuery(query);
        if (partitions != null) {
            request = request.withPartitions(partitions);
        }
        if (partitions == null || !standbyCopies()) {
            request = request.requireActive();
        } else {
            partitions.forEach(partition -> requireCaughtUp(store, partition));
        }
        StateQueryResult<R> result;
        try {
            result = streams.query(request);
        } catch (InvalidStateStoreException e) {
            throw QueryException.unavailable("store " + store + " is not queryable now (" + streams.state() + "), retry shortly");
        }
        if (partitions != null && !result.getPartitionResults().keySet().containsAll(partitions)) {
            throw QueryException.unavailable("store " + store + " partitions " + partitions + " are not all here now, retry shortly");
        }
        List<R> parts = new ArrayList<>();
        for (QueryResult<R> partition : result.getPartitionResults().values()) {
            if (partitions == null && partition.isFailure() && partition.getFailureReason() == FailureReason.NOT_ACTIVE) {
                continue;
            }
            if (partition.isFailure()) {
                // Not restored yet, or moved away during the query (a rebalance): a partial sum would be wrong, not late.
                throw QueryException.unavailable("store " + store + " is not queryable now (" + partition.getFailureReason()
                        + "), retry shortly");
            }
            parts.add(partition.getResult());
        }
        return parts;
    }

    /** The partition that holds {@code node}'s state in every node-keyed store ({@link #partitionOf}). */
    private int nodePartition(String node) {
        return partitionOf(DeviceHealthTopology.NODE_STATE_STORE, node, "node");
    }

    /**
     * The one partition that holds {@code key} in {@code store} and in every store of the same processor:
     * the node processor's stores are all partitioned like node-events, by node, and the pod claims' like
     * pod-device-status, by pod, so a query resolves it once for all the stores it reads
     * ({@link #partitionStore}). Stores are read by that partition: across all partitions, a partition
     * that is still restoring here, or just moving here, is left out and its key answered "not found"
     * (seen while instances restarted); asked by partition, it is an {@code InvalidStateStoreException},
     * which the query API answers 503, retry shortly. When another instance holds the key's partition
     * now, a {@link QueryException#notHeld} 404: "not here", which an instance that forwarded here
     * believing otherwise turns into 503 (the key moved), and a caller asking this instance's own state
     * takes as it is.
     *
     * @param what the kind of key, in messages ({@code node}, {@code pod})
     */
    private int partitionOf(String store, String key, String what) {
        KeyQueryMetadata metadata = streams.queryMetadataForKey(store, key, new StringSerializer());
        if (metadata == null || metadata.equals(KeyQueryMetadata.NOT_AVAILABLE)) {
            throw QueryException.unavailable("the partition of " + what + " " + key + " is not known now (" + streams.state()
                    + "), retry shortly");
        }
        // A standby copy counts where this instance reads them; each store's copy is then checked as it is
        // read (partitionStore).
        if (self.equals(metadata.activeHost()) || (standbyCopies() && metadata.standbyHosts().contains(self))) {
            return metadata.partition();
        }
        throw QueryException.notHeld(what + " " + key + " is held by another instance now");
    }

    /**
     * Refuses (503) to read this instance's copy of {@code store}'s {@code partition} as it stands while it is not
     * close enough to its changelog's end, the end a read_committed reader sees ({@link CommittedEnds}: the last
     * stable offset, short of a killed instance's open transaction). A standby copy may lack up to
     * {@link #maxLagRecords}, once it has finished restoring since it began here ({@link RestoredCopies}): a copy
     * still restoring may lack whole keys however few records it lacks. The active copy, read so while its stream
     * thread rebalances, may lack {@link RestoredCopies#MARKER_OFFSETS} offset at most: Kafka Streams reports a
     * running active task as caught up ({@code StreamTask#changelogOffsets}), and one that is not running
     * (restored, waiting for its thread) at the offset after the last record it restored, one short of the end
     * under exactly-once, where the marker that commits the last transaction takes an offset of its own. More than
     * that is a task still restoring, whose store holds an arbitrary part of the partition (a bound in records,
     * like a standby's, let a small store answer nearly empty in the scale-out test). The positions are Kafka
     * Streams' own ({@link KafkaStreams#allLocalStorePartitionLags}); for an active copy asked now, since a task can
     * go from running back to restoring (a corrupted task is wiped and restored) within any time a lag is kept.
     */
    private void requireCaughtUp(String store, int partition) {
        boolean active = activeHere(store, partition);
        CopyLag lag = lagOf(store, partition, active);
        if (!active && !restoredCopies.restored(store, partition)) {
            // Seen restoring up to LAG_TTL ago: a copy that has caught up since need not wait for the next fetch.
            lag = lagOf(store, partition, true);
            if (!restoredCopies.restored(store, partition)) {
                throw QueryException.unavailable("this instance's standby copy of " + store + " partition " + partition
                        + " is restoring (at " + lag.position() + " of " + restoredCopies.target(store, partition)
                        + "), retry shortly");
            }
        }
        long bound = active ? RestoredCopies.MARKER_OFFSETS : maxLagRecords;
        if (lag.lag() > bound) {
            throw QueryException.unavailable("this instance's " + (active ? "active" : "standby") + " copy of " + store + " partition "
                    + partition + " lacks " + lag.lag() + " records (more than " + bound + "), retry shortly");
        }
    }

    /** The lag of this instance's copy of {@code store}'s {@code partition}: asked of the broker now, or up to {@link #LAG_TTL} old. */
    private CopyLag lagOf(String store, int partition, boolean now) {
        CopyLag lag;
        try {
            Map<String, Map<Integer, CopyLag>> byStore = now ? fetchLags() : lags.get(ALL_STORES, all -> fetchLags());
            lag = byStore.getOrDefault(store, Map.of()).get(partition);
        } catch (RuntimeException e) {
            throw QueryException.unavailable("the lag of this instance's copy of " + store + " partition " + partition
                    + " is not known now (" + e.getClass().getSimpleName() + "), retry shortly");
        }
        if (lag == null) {
            throw QueryException.unavailable("this instance keeps no copy of " + store + " partition " + partition + " now, retry shortly");
        }
        return lag;
    }

    /** Every copy's lag against its changelog's last stable offset, taken in by {@link #restoredCopies}. */
    private Map<String, Map<Integer, CopyLag>> fetchLags() {
        return restoredCopies.observe(committedEnds.of(streams.allLocalStorePartitionLags()));
    }

    /** Whether this instance holds the active copy of {@code store}'s {@code partition}, as of the last assignment. */
    private boolean activeHere(String store, int partition) {
        KeyQueryMetadata metadata = streams.queryMetadataForKey(store, "",
                (StreamPartitioner<String, Object>) (topic, key, value, partitions) -> Optional.of(Set.of(partition)));
        return metadata != null && self.equals(metadata.activeHost());
    }

    /** This instance's copy of {@code partition} of every store, read as {@link #partitionStore} allows. */
    private PartitionStores partition(int partition) {
        return new PartitionStores() {
            @Override
            public <T> T store(String name, QueryableStoreType<T> type) {
                return partitionStore(name, type, partition);
            }
        };
    }

    /**
     * The keyed store {@code name}'s copy of {@code partition} ({@link #partitionOf}), a standby copy where allowed: then
     * only once that store's own copy is close enough to its changelog's end (a new standby restores its stores one by
     * one: the node's entry may be there before its devices are).
     */
    private <T> T partitionStore(String name, QueryableStoreType<T> type, int partition) {
        if (standbyCopies()) {
            requireCaughtUp(name, partition);
        }
        StoreQueryParameters<T> parameters = StoreQueryParameters.fromNameAndType(name, type).withPartition(partition);
        try {
            return streams.store(standbyCopies() ? parameters.enableStaleStores() : parameters);
        } catch (InvalidStateStoreException e) {
            throw QueryException.unavailable("store " + name + " partition " + partition + " is not queryable now ("
                    + streams.state() + "), retry shortly");
        }
    }

    private <T> T store(String name, QueryableStoreType<T> type) {
        try {
            return streams.store(StoreQueryParameters.fromNameAndType(name, type));
        } catch (InvalidStateStoreException e) {
            throw QueryException.unavailable("store " + name + " is not queryable now (" + streams.state() + "), retry shortly");
        }
    }
}
