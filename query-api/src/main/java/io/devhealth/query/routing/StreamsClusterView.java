package io.devhealth.query.routing;

import io.devhealth.processor.DeviceHealthTopology;
import io.devhealth.query.http.PageTokens;
import io.devhealth.query.state.CommittedEnds;
import io.devhealth.query.state.LocalStateQueries;
import io.devhealth.query.state.StateQueries;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.processor.StreamPartitioner;
import org.apache.kafka.streams.state.HostInfo;

/** The {@link ClusterView} of a Kafka Streams instance: ownership from {@code application.server} metadata. */
public final class StreamsClusterView implements ClusterView {

    private final KafkaStreams streams;
    private final HostInfo self;
    private final StateQueries local;
    private final StateQueries standbyCopies;

    /** @param admin asks the changelogs' last stable offsets for standby reads ({@link CommittedEnds}) */
    public StreamsClusterView(KafkaStreams streams, Admin admin, String applicationId, HostInfo self, PageTokens pageTokens,
                       StandbyReads standbyReads) {
        this.streams = streams;
        this.self = self;
        this.local = LocalStateQueries.active(streams, pageTokens, self);
        this.standbyCopies = LocalStateQueries.standby(streams, new CommittedEnds(admin, applicationId), pageTokens, self,
                standbyReads.maxLagRecords());
    }

    @Override
    public boolean ready() {
        return streams.state() == KafkaStreams.State.RUNNING;
    }

    @Override
    public String state() {
        return streams.state().toString();
    }

    @Override
    public Optional<Holders> holdersOfNode(String node) {
        return holders(DeviceHealthTopology.DEVICE_STATE_STORE, node);
    }

    @Override
    public Optional<Holders> holdersOfPodVerdict(String podKey) {
        return holders(DeviceHealthTopology.POD_VERDICT_STORE, podKey);
    }

    @Override
    public Optional<Holders> holdersOfPod(String podKey) {
        return holders(DeviceHealthTopology.POD_STATUS_STORE, podKey);
    }

    /**
     * The active and standby hosts of {@code key}'s partition of {@code store}, as of the last assignment (during a
     * rebalance, the one before it); empty before the first.
     */
    private Optional<Holders> holders(String store, String key) {
        KeyQueryMetadata holders = streams.queryMetadataForKey(store, key, Serdes.String().serializer());
        if (holders == null || holders.equals(KeyQueryMetadata.NOT_AVAILABLE)) {
            return Optional.empty();
        }
        return Optional.of(new Holders(holders.activeHost(), List.copyOf(holders.standbyHosts())));
    }

    /**
     * Each fleet store's partitions and their holders. Kafka Streams answers "who holds the partition of this key";
     * a partitioner that names the partition itself turns that into "who holds partition p", and tells the number
     * of partitions on the way.
     */
    @Override
    public Map<String, List<Holders>> fleetHolders() {
        Map<String, List<Holders>> holders = new TreeMap<>();
        for (String store : List.of(DeviceHealthTopology.FLEET_STATS_STORE, DeviceHealthTopology.FLEET_VERDICT_STORE)) {
            int[] partitions = {0};
            List<Holders> byPartition = new ArrayList<>();
            for (int p = 0; p == 0 || p < partitions[0]; p++) {
                int partition = p;
                KeyQueryMetadata metadata = streams.queryMetadataForKey(store, "", (StreamPartitioner<String, Object>)
                        (topic, key, value, count) -> {
                            partitions[0] = count;
                            return Optional.of(Set.of(partition));
                        });
                if (metadata == null || metadata.equals(KeyQueryMetadata.NOT_AVAILABLE)) {
                    return Map.of();
                }
                byPartition.add(new Holders(metadata.activeHost(), List.copyOf(metadata.standbyHosts())));
            }
            holders.put(store, List.copyOf(byPartition));
        }
        return holders;
    }

    @Override
    public StateQueries local() {
        return local;
    }

    @Override
    public StateQueries standbyCopies() {
        return standbyCopies;
    }

    @Override
    public boolean isSelf(HostInfo host) {
        return self.equals(host);
    }
}
