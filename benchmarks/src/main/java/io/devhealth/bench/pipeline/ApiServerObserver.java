package io.devhealth.bench.pipeline;

import io.devhealth.sink.PodStatusWriter;
import io.devhealth.simulators.kube.FleetKubernetesApi;
import io.devhealth.simulators.kube.LocalKubernetesApi;
import io.devhealth.simulators.kube.PodChangeListener;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the sink did to the API server, seen from the server's side, counted from the observer's start:
 * every change of a benchmark pod's {@code devhealth.io/DevicesHealthy} condition (a pod-visible
 * transition, handed to a listener with the time it became visible), and the requests by kind (pod
 * status writes, pod reads, Events, other).
 *
 * <ul>
 *   <li>{@link #listening(FleetKubernetesApi, String, TransitionListener)}: the fleet API's in-process
 *       pod listener (the time is when the server applied the write) and its request counters;
 *   <li>{@link #watching(LocalKubernetesApi, String, TransitionListener)}: a watch on the fabric8 mock
 *       (the time is when the watch event arrived) and a drain of its request log, which also keeps the
 *       mock from holding every request of a long run.
 * </ul>
 */
public abstract class ApiServerObserver implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(ApiServerObserver.class);

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

    private ApiServerObserver(String namespace, TransitionListener onTransition) {
        this.namespace = namespace;
        this.onTransition = onTransition;
    }

    /** Observes the fleet API through its pod listener and counters. */
    public static ApiServerObserver listening(FleetKubernetesApi api, String namespace, TransitionListener onTransition) {
        return new Listening(api, namespace, onTransition);
    }

    /** Observes the fabric8 mock through a watch and its request log. */
    public static ApiServerObserver watching(LocalKubernetesApi api, String namespace, TransitionListener onTransition) {
        return new Watching(api, namespace, onTransition);
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

    public abstract long statusPatches();

    public abstract long podReads();

    public abstract long eventWrites();

    public abstract long otherRequests();

    @Override
    public abstract void close();

    private static final class Listening extends ApiServerObserver {

        private final FleetKubernetesApi api;
        private final FleetKubernetesApi.RequestCounts start;
        private final PodChangeListener listener;

        Listening(FleetKubernetesApi api, String namespace, TransitionListener onTransition) {
            super(namespace, onTransition);
            this.api = api;
            this.start = api.requestCounts();
            this.listener = change -> {
                // Decoding costs only for pods the condition can be on; deletes carry no new status.
                if (namespace.equals(change.namespace()) && change.action() != Watcher.Action.DELETED) {
                    seen(change.pod(), change.appliedAtNanos());
                }
            };
            api.addPodListener(listener);
        }

        @Override
        public long statusPatches() {
            return api.requestCounts().statusWrites() - start.statusWrites();
        }

        @Override
        public long podReads() {
            return api.requestCounts().podReads() - start.podReads();
        }

        @Override
        public long eventWrites() {
            return api.requestCounts().eventWrites() - start.eventWrites();
        }

        @Override
        public long otherRequests() {
            return api.requestCounts().other() - start.other();
        }

        @Override
        public void close() {
            api.removePodListener(listener);
        }
    }

    private static final class Watching extends ApiServerObserver {

        private final LocalKubernetesApi api;
        private final AtomicLong statusPatches = new AtomicLong();
        private final AtomicLong podReads = new AtomicLong();
        private final AtomicLong eventWrites = new AtomicLong();
        private final AtomicLong otherRequests = new AtomicLong();
        private final Thread drainer;
        private final Watch watch;
        private volatile boolean running = true;

        Watching(LocalKubernetesApi api, String namespace, TransitionListener onTransition) {
            super(namespace, onTransition);
            this.api = api;
            discardRequestsSoFar(api);
            this.drainer = new Thread(this::drain, "bench-api-request-drain");
            this.drainer.setDaemon(true);
            this.drainer.start();
            this.watch = api.client().pods().inNamespace(namespace).watch(new Watcher<>() {
                @Override
                public void eventReceived(Action action, Pod pod) {
                    seen(pod, System.nanoTime());
                }

                @Override
                public void onClose(WatcherException cause) {
                    if (running) {
                        LOGGER.error("pod watch closed error=\"{}\"", cause == null ? "none" : cause.toString());
                    }
                }
            });
        }

        /** Requests made before observing (creating the pods) are not the sink's. */
        private static void discardRequestsSoFar(LocalKubernetesApi api) {
            try {
                while (api.mockServer().takeRequest(0, TimeUnit.MILLISECONDS) != null) {
                    // discarded
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        private void drain() {
            while (running) {
                try {
                    RecordedRequest request = api.mockServer().takeRequest(200, TimeUnit.MILLISECONDS);
                    if (request == null) {
                        continue;
                    }
                    String path = request.getPath() == null ? "" : request.getPath();
                    String method = request.getMethod();
                    if ("PATCH".equals(method) && path.contains("/pods/")) {
                        statusPatches.incrementAndGet();
                    } else if ("GET".equals(method) && path.contains("/pods/") && !path.contains("watch")) {
                        podReads.incrementAndGet();
                    } else if ("POST".equals(method) && path.contains("/events")) {
                        eventWrites.incrementAndGet();
                    } else {
                        otherRequests.incrementAndGet();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }

        @Override
        public long statusPatches() {
            return statusPatches.get();
        }

        @Override
        public long podReads() {
            return podReads.get();
        }

        @Override
        public long eventWrites() {
            return eventWrites.get();
        }

        @Override
        public long otherRequests() {
            return otherRequests.get();
        }

        @Override
        public void close() {
            running = false;
            watch.close();
            drainer.interrupt();
        }
    }
}
