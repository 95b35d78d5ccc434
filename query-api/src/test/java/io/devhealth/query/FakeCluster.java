package io.devhealth.query;

import io.devhealth.query.http.PageTokens;
import io.devhealth.query.routing.ClusterView;
import io.devhealth.query.state.QueryViews;
import io.devhealth.query.state.StateQueries;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.HostInfo;

/**
 * A {@link ClusterView} without Kafka: fixed owners per node; each instance knows only its own nodes and pods, and
 * takes a pod it does not know for the first of its other instances' (the tests run at most two); pod verdicts live
 * on one instance (this one unless told otherwise), which answers for the pods it is given.
 */
final class FakeCluster implements ClusterView {

    /** Tokens are checked as the real stores do, so that a forged one is a 400 here too. */
    static final PageTokens PAGE_TOKENS = PageTokens.withSecret("fake-cluster");

    private final HostInfo self;
    private final Map<String, HostInfo> owners;
    private final List<HostInfo> others;
    private final Set<String> pods;
    private final HostInfo verdictOwner;
    private final Set<String> verdicts;
    private volatile boolean rebalancing;

    FakeCluster(HostInfo self, Map<String, HostInfo> owners, List<HostInfo> others, Set<String> pods) {
        this(self, owners, others, pods, self, Set.of());
    }

    /** @param verdicts {@code namespace/name} of the pods whose verdict this instance holds, when it is {@code verdictOwner} */
    FakeCluster(HostInfo self, Map<String, HostInfo> owners, List<HostInfo> others, Set<String> pods, HostInfo verdictOwner,
            Set<String> verdicts) {
        this.self = self;
        this.owners = owners;
        this.others = others;
        this.pods = pods;
        this.verdictOwner = verdictOwner;
        this.verdicts = verdicts;
    }

    /**
     * From now on this instance's stream thread rebalances, as Kafka Streams has it: an active-only read is refused,
     * a read of the copies as they stand ({@link #standbyCopies}) still answers.
     */
    void rebalance() {
        rebalancing = true;
    }

    @Override
    public boolean ready() {
        return !rebalancing;
    }

    @Override
    public String state() {
        return rebalancing ? "REBALANCING" : "RUNNING";
    }

    @Override
    public Optional<Holders> holdersOfNode(String node) {
        return Optional.ofNullable(owners.get(node)).map(Holders::activeOnly);
    }

    @Override
    public boolean isSelf(HostInfo host) {
        return self.equals(host);
    }

    @Override
    public Optional<Holders> holdersOfPodVerdict(String podKey) {
        return Optional.of(Holders.activeOnly(verdictOwner));
    }

    @Override
    public Optional<Holders> holdersOfPod(String podKey) {
        return Optional.of(Holders.activeOnly(pods.contains(podKey) || others.isEmpty() ? self : others.get(0)));
    }

    @Override
    public Map<String, List<Holders>> fleetHolders() {
        return Map.of();
    }

    /** No standbys here: the stores of this instance are its only copies, readable as they stand while it rebalances. */
    @Override
    public StateQueries standbyCopies() {
        return copies();
    }

    @Override
    public StateQueries local() {
        if (rebalancing) {
            throw new InvalidStateStoreException("Cannot get state store node-state because the stream thread is PARTITIONS_ASSIGNED, "
                    + "not RUNNING");
        }
        return copies();
    }

    private StateQueries copies() {
        return new StateQueries() {
            @Override
            public Optional<QueryViews.PodDevices> pod(String namespace, String name, Instant at) {
                return pods.contains(namespace + "/" + name)
                        ? Optional.of(new QueryViews.PodDevices(namespace, name, "served-by-" + self.port(), "", null, 1,
                                "2026-11-29T10:00:00Z", "Healthy", List.of(), null))
                        : Optional.empty();
            }

            @Override
            public Optional<QueryViews.DeviceHistory> deviceHistory(String node, String driver, String pool, String device, Instant from,
                                                                    Instant to, int limit, String token) {
                return Optional.empty();
            }

            @Override
            public Optional<QueryViews.NodeDevices> nodeDevices(String node, int limit, String token) {
                if (token != null) {
                    PAGE_TOKENS.parseAfterKey(node, token);
                }
                return self.equals(owners.get(node)) ? Optional.of(new QueryViews.NodeDevices(node, List.of(), null)) : Optional.empty();
            }

            @Override
            public java.util.Map<String, io.devhealth.processor.state.FleetCounts> fleetCounts(Instant from, Instant to, Set<Integer> partitions) {
                return java.util.Map.of();
            }

            @Override
            public Optional<QueryViews.PodVerdict> verdict(String namespace, String name, Instant at) {
                return self.equals(verdictOwner) && verdicts.contains(namespace + "/" + name)
                        ? Optional.of(new QueryViews.PodVerdict("DeviceFailure", "uid-1", "Failed", "2026-11-29T09:00:00Z",
                                "2026-11-29T09:00:01Z", "verdict-of-" + self.port()))
                        : Optional.empty();
            }

            @Override
            public java.util.Map<String, java.util.Map<io.devhealth.schema.avro.Verdict, Long>> fleetVerdicts(Instant from, Instant to, Set<Integer> partitions) {
                return java.util.Map.of();
            }
        };
    }
}
