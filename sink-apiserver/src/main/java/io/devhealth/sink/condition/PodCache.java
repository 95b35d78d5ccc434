package io.devhealth.sink.condition;

import io.devhealth.sink.TerminatedPodWatcher;
import io.devhealth.sink.postmortem.TerminatedDeviceHealth;
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
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodStatus;
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
 * <p>The informer's store keeps a slim copy of each pod ({@link #slim}, kept as a {@link Kept}): what
 * the writer needs to check a status against its pod and to patch a live pod's condition, and what the
 * watcher needs. A
 * terminated pod's post-mortem record needs the whole pod (container resources, exit codes), so the
 * writer reads a terminated pod from the API server still.
 *
 * <p>Until the first list has been stored ({@link SharedIndexInformer#hasSynced()}), and while the
 * watch is down, every lookup is a miss. The cache is never trusted alone: see {@link CachedPods}.
 */
public final class PodCache implements CachedPods, AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(PodCache.class);
    /** Pods per page of the informer's list: a fleet has tens of thousands, one answer of them all is hundreds of MB. */
    static final long LIST_PAGE = 500;

    private final SharedIndexInformer<Pod> informer;
    private final SlimPodStore store = new SlimPodStore();

    public PodCache(KubernetesClient client) {
        this.informer = client.pods().inAnyNamespace().withLimit(LIST_PAGE).runnableInformer(0);
        informer.itemStore(store);
        // Lookups are by namespace/name only; the default namespace index would be a second map of every pod.
        informer.removeNamespaceIndex();
    }

    /** Before {@link #start()}: handlers added later miss the pods of the first list. */
    public void addEventHandler(ResourceEventHandler<Pod> handler) {
        informer.addEventHandler(handler);
    }

    public void start() {
        informer.start().whenComplete((ignored, error) -> {
            if (error != null) {
                // Not fatal: every lookup then misses and the writer reads each pod from the API server;
                // terminated pods are found when their statuses arrive.
                LOGGER.error("pod watch failed to start, writes read each pod error=\"{}\"", error.getMessage());
            } else {
                LOGGER.info("pod watch started pods={}", store.size());
            }
        });
    }

    /**
     * Null also while the informer's watch is down: its copies then age without bound, and each write
     * from one would cost a failed PATCH before the read (three requests instead of two).
     */
    @Override
    public Pod get(String namespace, String name) {
        return informer.hasSynced() && informer.isWatching() ? store.get(namespace + "/" + name) : null;
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
     * The store keeps it as a {@link Kept}; this is the Pod made of one.
     */
    static Pod slim(Pod pod) {
        return Kept.of(pod).pod();
    }

    /**
     * What the cache keeps of one pod, in plain strings and arrays: 348 bytes of heap against 2,620 for
     * the same slim copy as a fabric8 Pod (every model object carries a map of additional properties and
     * lists of its own), measured on 50,000 pods with one claim, one container and six conditions. A Pod
     * is made of it on each read, one per write. Strings many pods share (namespace, node, phase, condition types) are interned. Never
     * changed once made: the informer replaces an entry, it does not edit one. Claims are kept as pairs
     * (name, resourceClaimName); {@code ours} holds, per condition, the whole condition where it is
     * devhealth's, else null; {@code finishedAt} counts only where {@code terminated} says so.
     */
    static final class Kept {

        private final String namespace;
        private final String name;
        private final String uid;
        private final String resourceVersion;
        private final String nodeName;
        private final String phase;
        private final String[] claims;
        private final String[] claimStatuses;
        private final String[] containers;
        private final boolean[] terminated;
        private final String[] finishedAt;
        private final String[] conditionTypes;
        private final PodCondition[] ours;

        private Kept(String namespace, String name, String uid, String resourceVersion, String nodeName, String phase,
                     String[] claims, String[] claimStatuses, String[] containers, boolean[] terminated, String[] finishedAt,
                     String[] conditionTypes, PodCondition[] ours) {
            this.namespace = namespace;
            this.name = name;
            this.uid = uid;
            this.resourceVersion = resourceVersion;
            this.nodeName = nodeName;
            this.phase = phase;
            this.claims = claims;
            this.claimStatuses = claimStatuses;
            this.containers = containers;
            this.terminated = terminated;
            this.finishedAt = finishedAt;
            this.conditionTypes = conditionTypes;
            this.ours = ours;
        }

        private static final String[] NONE = new String[0];

        static Kept of(Pod pod) {
            PodSpec spec = pod.getSpec();
            PodStatus status = pod.getStatus();
            String[] claims = NONE;
            if (spec != null && spec.getResourceClaims() != null && !spec.getResourceClaims().isEmpty()) {
                claims = spec.getResourceClaims().stream().flatMap(c -> Stream.of(c.getName(), c.getResourceClaimName())).toArray(String[]::new);
            }
            String[] claimStatuses = NONE;
            String[] containers = NONE;
            boolean[] terminated = new boolean[0];
            String[] finishedAt = NONE;
            String[] types = NONE;
            PodCondition[] ours = new PodCondition[0];
            if (status != null) {
                if (status.getResourceClaimStatuses() != null && !status.getResourceClaimStatuses().isEmpty()) {
                    claimStatuses = status.getResourceClaimStatuses().stream().flatMap(c -> Stream.of(c.getName(), c.getResourceClaimName()))
                            .toArray(String[]::new);
                }
                List<ContainerStatus> statuses = status.getContainerStatuses() == null ? List.of() : status.getContainerStatuses();
                containers = new String[statuses.size()];
                terminated = new boolean[statuses.size()];
                finishedAt = new String[statuses.size()];
                for (int i = 0; i < statuses.size(); i++) {
                    ContainerStatus c = statuses.get(i);
                    containers[i] = c.getName();
                    terminated[i] = c.getState() != null && c.getState().getTerminated() != null;
                    finishedAt[i] = terminated[i] ? c.getState().getTerminated().getFinishedAt() : null;
                }
                List<PodCondition> conditions = status.getConditions() == null ? List.of() : status.getConditions();
                types = new String[conditions.size()];
                ours = new PodCondition[conditions.size()];
                for (int i = 0; i < conditions.size(); i++) {
                    PodCondition c = conditions.get(i);
                    types[i] = intern(c.getType());
                    ours[i] = isOurs(c) ? new PodConditionBuilder(c).build() : null;
                }
            }
            return new Kept(intern(pod.getMetadata().getNamespace()), pod.getMetadata().getName(), pod.getMetadata().getUid(),
                    pod.getMetadata().getResourceVersion(), spec == null ? null : intern(spec.getNodeName()),
                    status == null ? null : intern(status.getPhase()), claims, claimStatuses, containers, terminated, finishedAt, types, ours);
        }

        /** A new Pod each time: callers may hold it while the informer replaces this entry. */
        Pod pod() {
            List<PodResourceClaim> podClaims = new ArrayList<>(claims.length / 2);
            for (int i = 0; i < claims.length; i += 2) {
                podClaims.add(new PodResourceClaimBuilder().withName(claims[i]).withResourceClaimName(claims[i + 1]).build());
            }
            List<PodResourceClaimStatus> podClaimStatuses = new ArrayList<>(claimStatuses.length / 2);
            for (int i = 0; i < claimStatuses.length; i += 2) {
                podClaimStatuses.add(new PodResourceClaimStatusBuilder().withName(claimStatuses[i]).withResourceClaimName(claimStatuses[i + 1]).build());
            }
            List<ContainerStatus> containerStatuses = new ArrayList<>(containers.length);
            for (int i = 0; i < containers.length; i++) {
                ContainerStatusBuilder slim = new ContainerStatusBuilder().withName(containers[i]);
                if (terminated[i]) {
                    slim.withState(new ContainerStateBuilder().withNewTerminated().withFinishedAt(finishedAt[i]).endTerminated().build());
                }
                containerStatuses.add(slim.build());
            }
            List<PodCondition> conditions = new ArrayList<>(conditionTypes.length);
            for (int i = 0; i < conditionTypes.length; i++) {
                conditions.add(ours[i] != null ? new PodConditionBuilder(ours[i]).build() : new PodConditionBuilder().withType(conditionTypes[i]).build());
            }
            return new PodBuilder()
                    .withNewMetadata()
                        .withNamespace(namespace)
                        .withName(name)
                        .withUid(uid)
                        .withResourceVersion(resourceVersion)
                    .endMetadata()
                    .withNewSpec()
                        .withNodeName(nodeName)
                        .withResourceClaims(podClaims)
                    .endSpec()
                    .withNewStatus()
                        .withPhase(phase)
                        .withContainerStatuses(containerStatuses)
                        .withConditions(conditions)
                        .withResourceClaimStatuses(podClaimStatuses)
                    .endStatus()
                    .build();
        }
    }

    private static boolean isOurs(PodCondition condition) {
        return PodStatusWriter.CONDITION_TYPE.equals(condition.getType()) || PodStatusWriter.FINAL_CONDITION_TYPE.equals(condition.getType());
    }

    private static String intern(String s) {
        return s == null ? null : s.intern();
    }

    /** The informer's store: a {@link Kept} per pod; what it hands out is the slim Pod made of one. */
    static final class SlimPodStore implements ItemStore<Pod> {

        private final ConcurrentHashMap<String, Kept> pods = new ConcurrentHashMap<>();

        @Override
        public String getKey(Pod pod) {
            return Cache.metaNamespaceKeyFunc(pod);
        }

        @Override
        public Pod put(String key, Pod pod) {
            return podOf(pods.put(key, Kept.of(pod)));
        }

        @Override
        public Pod remove(String key) {
            return podOf(pods.remove(key));
        }

        @Override
        public Stream<String> keySet() {
            return pods.keySet().stream();
        }

        @Override
        public Stream<Pod> values() {
            return pods.values().stream().map(Kept::pod);
        }

        @Override
        public int size() {
            return pods.size();
        }

        @Override
        public Pod get(String key) {
            return podOf(pods.get(key));
        }

        /** Not the whole object: on a re-list the informer compares resourceVersions, not contents. */
        @Override
        public boolean isFullState() {
            return false;
        }

        private static Pod podOf(Kept kept) {
            return kept == null ? null : kept.pod();
        }
    }
}
