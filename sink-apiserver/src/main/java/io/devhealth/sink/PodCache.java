package io.devhealth.sink;

import io.fabric8.kubernetes.api.model.ContainerStateBuilder;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sink's one watch of pods (all namespaces: the sink serves every node), shared by
 * {@link PodStatusWriter}, which reads a pod here instead of GETting it before each write, and
 * {@link TerminatedPodWatcher}, which is told when a pod terminates or is deleted.
 *
 * <p>The informer's store keeps a slim copy of each pod ({@link #slim}): what the writer needs to check
 * a status against its pod and to patch a live pod's condition, and what the watcher needs. A
 * terminated pod's post-mortem record needs the whole pod (container resources, exit codes), so the
 * writer reads a terminated pod from the API server still.
 *
 * <p>Until the first list has been stored ({@link SharedIndexInformer#hasSynced()}) every lookup is a
 * miss. The cache is never trusted alone: see {@link CachedPods}.
 */
final class PodCache implements CachedPods, AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(PodCache.class);
    /** Pods per page of the informer's list: a fleet has tens of thousands, one answer of them all is hundreds of MB. */
    static final long LIST_PAGE = 500;

    private final SharedIndexInformer<Pod> informer;
    private final SlimPodStore store = new SlimPodStore();

    PodCache(KubernetesClient client) {
        this.informer = client.pods().inAnyNamespace().withLimit(LIST_PAGE).runnableInformer(0);
        informer.itemStore(store);
        // Lookups are by namespace/name only; the default namespace index would be a second map of every pod.
        informer.removeNamespaceIndex();
    }

    /** Before {@link #start()}: handlers added later miss the pods of the first list. */
    void addEventHandler(ResourceEventHandler<Pod> handler) {
        informer.addEventHandler(handler);
    }

    void start() {
        informer.start().whenComplete((ignored, error) -> {
            if (error != null) {
                // Not fatal: the writer reads every pod from the API server, and terminated pods are found
                // when their statuses arrive. The informer keeps retrying the list.
                LOGGER.error("pod watch failed to start, writes read each pod error=\"{}\"", error.getMessage());
            } else {
                LOGGER.info("pod watch started pods={}", store.size());
            }
        });
    }

    @Override
    public Pod get(String namespace, String name) {
        return informer.hasSynced() ? store.get(namespace + "/" + name) : null;
    }

    /** Pods in the cache. */
    int size() {
        return store.size();
    }

    @Override
    public void close() {
        informer.close();
    }

    /**
     * What the sink reads of a pod: metadata namespace, name, uid and resourceVersion; spec.nodeName and
     * spec.resourceClaims, status.resourceClaimStatuses ({@link PodIdentity}); status.phase and each
     * container's name and finishedAt ({@link TerminatedDeviceHealth}, {@link TerminatedPodWatcher});
     * and status.conditions in their order, devhealth's whole and every other by its type alone: the
     * JSON Patch addresses devhealth's condition by its index, and adds to an empty list differently.
     * Strings that many pods share (namespace, node, phase, condition types) are interned.
     */
    static Pod slim(Pod pod) {
        List<PodResourceClaim> claims = new ArrayList<>();
        if (pod.getSpec() != null && pod.getSpec().getResourceClaims() != null) {
            for (PodResourceClaim claim : pod.getSpec().getResourceClaims()) {
                claims.add(new PodResourceClaimBuilder().withName(claim.getName()).withResourceClaimName(claim.getResourceClaimName()).build());
            }
        }
        List<ContainerStatus> containers = new ArrayList<>();
        List<PodCondition> conditions = new ArrayList<>();
        List<PodResourceClaimStatus> claimStatuses = new ArrayList<>();
        if (pod.getStatus() != null) {
            if (pod.getStatus().getContainerStatuses() != null) {
                for (ContainerStatus c : pod.getStatus().getContainerStatuses()) {
                    ContainerStatusBuilder slim = new ContainerStatusBuilder().withName(c.getName());
                    if (c.getState() != null && c.getState().getTerminated() != null) {
                        slim.withState(new ContainerStateBuilder().withNewTerminated()
                                .withFinishedAt(c.getState().getTerminated().getFinishedAt()).endTerminated().build());
                    }
                    containers.add(slim.build());
                }
            }
            if (pod.getStatus().getConditions() != null) {
                for (PodCondition c : pod.getStatus().getConditions()) {
                    conditions.add(ours(c) ? new PodConditionBuilder(c).build()
                            : new PodConditionBuilder().withType(intern(c.getType())).build());
                }
            }
            if (pod.getStatus().getResourceClaimStatuses() != null) {
                for (PodResourceClaimStatus s : pod.getStatus().getResourceClaimStatuses()) {
                    claimStatuses.add(new PodResourceClaimStatusBuilder().withName(s.getName()).withResourceClaimName(s.getResourceClaimName()).build());
                }
            }
        }
        return new PodBuilder()
                .withNewMetadata()
                    .withNamespace(intern(pod.getMetadata().getNamespace()))
                    .withName(pod.getMetadata().getName())
                    .withUid(pod.getMetadata().getUid())
                    .withResourceVersion(pod.getMetadata().getResourceVersion())
                .endMetadata()
                .withNewSpec()
                    .withNodeName(pod.getSpec() == null ? null : intern(pod.getSpec().getNodeName()))
                    .withResourceClaims(claims)
                .endSpec()
                .withNewStatus()
                    .withPhase(pod.getStatus() == null ? null : intern(pod.getStatus().getPhase()))
                    .withContainerStatuses(containers)
                    .withConditions(conditions)
                    .withResourceClaimStatuses(claimStatuses)
                .endStatus()
                .build();
    }

    private static boolean ours(PodCondition condition) {
        return PodStatusWriter.CONDITION_TYPE.equals(condition.getType()) || PodStatusWriter.FINAL_CONDITION_TYPE.equals(condition.getType());
    }

    private static String intern(String s) {
        return s == null ? null : s.intern();
    }

    /** The informer's store, of slim copies. */
    static final class SlimPodStore implements ItemStore<Pod> {

        private final ConcurrentHashMap<String, Pod> pods = new ConcurrentHashMap<>();

        @Override
        public String getKey(Pod pod) {
            return Cache.metaNamespaceKeyFunc(pod);
        }

        @Override
        public Pod put(String key, Pod pod) {
            return pods.put(key, slim(pod));
        }

        @Override
        public Pod remove(String key) {
            return pods.remove(key);
        }

        @Override
        public Stream<String> keySet() {
            return pods.keySet().stream();
        }

        @Override
        public Stream<Pod> values() {
            return pods.values().stream();
        }

        @Override
        public int size() {
            return pods.size();
        }

        @Override
        public Pod get(String key) {
            return pods.get(key);
        }

        /** Not the whole object: on a re-list the informer compares resourceVersions, not contents. */
        @Override
        public boolean isFullState() {
            return false;
        }
    }
}
