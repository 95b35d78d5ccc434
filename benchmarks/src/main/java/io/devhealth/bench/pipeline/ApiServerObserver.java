package io.devhealth.bench.pipeline;

import io.devhealth.simulators.kube.FleetKubernetesApi;
import io.devhealth.simulators.kube.PodChangeListener;
import io.devhealth.sink.condition.PodStatusWriter;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * What the sink did to the API server, seen from the server's side, counted from the observer's start:
 * every change of a benchmark pod's {@code devhealth.io/DevicesHealthy} condition (a pod-visible
 * transition, handed to a listener with the time it became visible), and the requests by kind (pod
 * status writes, pod reads, Events, other). On the in-process {@link FleetKubernetesApi} changes come
 * from its pod listener with the time the server applied the write, and requests from its counters; on
 * a {@link RealControlPlane} changes come from a watch, as a Job controller sees them, and requests from
 * the server's {@code /metrics}.
 */
public final class ApiServerObserver implements AutoCloseable {

    /** A pod-visible change of the condition. */
    @FunctionalInterface
    public interface TransitionListener {
        /** @param atNanos {@link System#nanoTime()} when the change became visible in the API server */
        void onTransition(String pod, String condition, long atNanos);
    }

    private final String namespace;
    private final TransitionListener onTransition;
    private final Map<String, String> conditionByPod = new ConcurrentHashMap<>();
    private final AtomicLong visibleTransitions = new AtomicLong();
    private final Supplier<FleetKubernetesApi.RequestCounts> counts;
    private final FleetKubernetesApi.RequestCounts start;
    private final Runnable detach;

    /** Observes the pods of {@code namespace} through the API's pod listener and counters. */
    public ApiServerObserver(FleetKubernetesApi api, String namespace, TransitionListener onTransition) {
        this.namespace = namespace;
        this.onTransition = onTransition;
        this.counts = api::requestCounts;
        this.start = counts.get();
        PodChangeListener listener = change -> {
            // Decoding costs only for pods the condition can be on; deletes carry no new status.
            if (namespace.equals(change.namespace()) && change.action() != Watcher.Action.DELETED) {
                seen(change.pod(), change.appliedAtNanos());
            }
        };
        api.addPodListener(listener);
        this.detach = () -> api.removePodListener(listener);
    }

    /** Observes the pods of {@code namespace} through a watch as cluster admin, and the server's request counts. */
    public ApiServerObserver(RealControlPlane api, String namespace, TransitionListener onTransition) {
        this.namespace = namespace;
        this.onTransition = onTransition;
        this.counts = api::requestCounts;
        SharedIndexInformer<Pod> informer = api.admin().pods().inNamespace(namespace).inform(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Pod pod) {
                seen(pod, System.nanoTime());
            }

            @Override
            public void onUpdate(Pod before, Pod pod) {
                seen(pod, System.nanoTime());
            }

            @Override
            public void onDelete(Pod pod, boolean finalStateUnknown) {
                // A deleted pod carries no new status.
            }
        });
        // Counted after the informer's own list, which is the observer's request and not the sink's.
        this.start = counts.get();
        this.detach = informer::close;
    }

    /** A pod as it is now in the API server. */
    void seen(Pod pod, long atNanos) {
        if (!namespace.equals(pod.getMetadata().getNamespace())) {
            return;
        }
        String status = condition(pod);
        if (status == null) {
            return;
        }
        String name = pod.getMetadata().getName();
        String previous = conditionByPod.put(name, status);
        if (!status.equals(previous)) {
            visibleTransitions.incrementAndGet();
            onTransition.onTransition(name, status, atNanos);
        }
    }

    private static String condition(Pod pod) {
        if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
            return null;
        }
        for (PodCondition condition : pod.getStatus().getConditions()) {
            if (PodStatusWriter.CONDITION_TYPE.equals(condition.getType())) {
                return condition.getStatus();
            }
        }
        return null;
    }

    /** The pod's last seen condition status (True, False, Unknown), or null before the sink wrote one. */
    public String condition(String pod) {
        return conditionByPod.get(pod);
    }

    /** Pods whose condition currently has this status. */
    public long podsWithCondition(String status) {
        return conditionByPod.values().stream().filter(status::equals).count();
    }

    public long visibleTransitions() {
        return visibleTransitions.get();
    }

    public long statusPatches() {
        return counts.get().statusWrites() - start.statusWrites();
    }

    public long podReads() {
        return counts.get().podReads() - start.podReads();
    }

    public long eventWrites() {
        return counts.get().eventWrites() - start.eventWrites();
    }

    public long otherRequests() {
        return counts.get().other() - start.other();
    }

    @Override
    public void close() {
        detach.run();
    }
}
