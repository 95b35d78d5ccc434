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

    StreamsClusterView(KafkaStreams streams, HostInfo self, PageTokens pageTokens) {
        this.streams = streams;
        this.self = self;
        this.local = new LocalStateQueries(streams, pageTokens, self);
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
    public Optional<HostInfo> ownerOfNode(String node) {
        return owner(DeviceHealthTopology.DEVICE_STATE_STORE, node);
    }

    @Override
    public Optional<HostInfo> ownerOfPodVerdict(String podKey) {
        return owner(DeviceHealthTopology.POD_VERDICT_STORE, podKey);
    }

    @Override
    public Optional<HostInfo> ownerOfPod(String podKey) {
        return owner(DeviceHealthTopology.POD_STATUS_STORE, podKey);
    }

    /** The active host of {@code key}'s partition of {@code store}, empty while it is not known (rebalancing). */
    private Optional<HostInfo> owner(String store, String key) {
        KeyQueryMetadata owner = streams.queryMetadataForKey(store, key, Serdes.String().serializer());
        if (owner == null || owner.equals(KeyQueryMetadata.NOT_AVAILABLE)) {
            return Optional.empty();
        }
        return Optional.of(owner.activeHost());
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
    public boolean isSelf(HostInfo host) {
        return self.equals(host);
    }
}
