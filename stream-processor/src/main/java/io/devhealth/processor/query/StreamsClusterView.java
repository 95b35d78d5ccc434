package io.devhealth.processor.query;

import io.devhealth.processor.DeviceHealthTopology;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.StreamsMetadata;
import org.apache.kafka.streams.state.HostInfo;

/** The {@link ClusterView} of a Kafka Streams instance: ownership from {@code application.server} metadata. */
final class StreamsClusterView implements ClusterView {

    private final KafkaStreams streams;
    private final HostInfo self;
    private final StateQueries local;
    private final StateQueries standbyCopies;

    StreamsClusterView(KafkaStreams streams, HostInfo self, PageTokens pageTokens, StandbyReads standbyReads) {
        this.streams = streams;
        this.self = self;
        this.local = LocalStateQueries.active(streams, pageTokens, self);
        this.standbyCopies = LocalStateQueries.standby(streams, pageTokens, self, standbyReads.maxLagRecords());
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

    @Override
    public List<HostInfo> fleetInstances() {
        return java.util.stream.Stream.concat(streams.streamsMetadataForStore(DeviceHealthTopology.FLEET_STATS_STORE).stream(),
                        streams.streamsMetadataForStore(DeviceHealthTopology.FLEET_VERDICT_STORE).stream())
                .map(StreamsMetadata::hostInfo)
                .distinct()
                .toList();
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
