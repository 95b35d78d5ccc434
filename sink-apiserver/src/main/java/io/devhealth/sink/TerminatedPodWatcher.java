package io.devhealth.sink;

import io.fabric8.kubernetes.api.model.ContainerStateBuilder;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the sink when a pod terminates, because a pod can end without any new device status arriving
 * (upstream #132978 is exactly that case). An informer on pods whose {@code status.phase} is neither
 * Pending, Running nor Unknown, i.e. Succeeded or Failed (the phases in which the kubelet has
 * unprepared the pod's claims). The informer's store keeps a slim copy of each pod (name, uid,
 * resourceVersion, phase, container names and finish times), not the whole object, so memory stays
 * small even with the many completed pods a batch cluster keeps. The phase is checked again here:
 * servers (and the test mock) that ignore the field selector still work.
 */
final class TerminatedPodWatcher implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(TerminatedPodWatcher.class);

    private final SharedIndexInformer<Pod> informer;

    TerminatedPodWatcher(KubernetesClient client, Consumer<Pod> onTerminated, Consumer<Pod> onDeleted) {
        this.informer = client.pods().inAnyNamespace()
                .withoutField("status.phase", "Pending")
                .withoutField("status.phase", "Running")
                .withoutField("status.phase", "Unknown")
                .runnableInformer(0);
        informer.itemStore(new SlimPodStore());
        informer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Pod pod) {
                if (terminated(pod)) {
                    onTerminated.accept(pod);
                }
            }

            @Override
            public void onUpdate(Pod oldPod, Pod newPod) {
                if (terminated(newPod) && (oldPod == null || !terminated(oldPod))) {
                    onTerminated.accept(newPod);
                }
            }

            @Override
            public void onDelete(Pod pod, boolean deletedFinalStateUnknown) {
                onDeleted.accept(pod);
            }
        });
    }

    void start() {
        informer.start().whenComplete((ignored, error) -> {
            if (error != null) {
                LOGGER.error("terminated-pod watch failed to start error=\"{}\"", error.getMessage());
            } else {
                LOGGER.info("terminated-pod watch started");
            }
        });
    }

    static boolean terminated(Pod pod) {
        String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        return "Succeeded".equals(phase) || "Failed".equals(phase);
    }

    @Override
    public void close() {
        informer.close();
    }

    /** Keeps only what the sink needs of each pod. */
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

        @Override
        public boolean isFullState() {
            return false;
        }

        static Pod slim(Pod pod) {
            List<ContainerStatus> containers = new ArrayList<>();
            if (pod.getStatus() != null && pod.getStatus().getContainerStatuses() != null) {
                for (ContainerStatus c : pod.getStatus().getContainerStatuses()) {
                    ContainerStatusBuilder slim = new ContainerStatusBuilder().withName(c.getName());
                    if (c.getState() != null && c.getState().getTerminated() != null) {
                        slim.withState(new ContainerStateBuilder().withNewTerminated()
                                .withFinishedAt(c.getState().getTerminated().getFinishedAt()).endTerminated().build());
                    }
                    containers.add(slim.build());
                }
            }
            return new PodBuilder()
                    .withNewMetadata()
                        .withNamespace(pod.getMetadata().getNamespace())
                        .withName(pod.getMetadata().getName())
                        .withUid(pod.getMetadata().getUid())
                        .withResourceVersion(pod.getMetadata().getResourceVersion())
                    .endMetadata()
                    .withNewStatus()
                        .withPhase(pod.getStatus() == null ? null : pod.getStatus().getPhase())
                        .withContainerStatuses(containers)
                    .endStatus()
                    .build();
        }
    }
}
