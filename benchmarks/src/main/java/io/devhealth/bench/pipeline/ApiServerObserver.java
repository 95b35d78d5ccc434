package io.devhealth.bench.pipeline;

import io.devhealth.sink.PodStatusWriter;
import io.devhealth.testkit.kube.LocalKubernetesApi;
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
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the sink did to the API server, seen from the server's side: a watch on the benchmark's pods
 * reports every change of the {@code devhealth.io/DevicesHealthy} condition (a pod-visible transition,
 * handed to a listener with the time it was seen), and a drain of the mock server's request log counts
 * the sink's requests by kind (pod status PATCHes, reads, Events). Draining also keeps the mock from
 * holding every request of a long run in memory.
 */
public final class ApiServerObserver implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(ApiServerObserver.class);

    private final LocalKubernetesApi api;
    private final Map<String, String> conditionByPod = new ConcurrentHashMap<>();
    private final AtomicLong visibleTransitions = new AtomicLong();
    private final AtomicLong statusPatches = new AtomicLong();
    private final AtomicLong podReads = new AtomicLong();
    private final AtomicLong eventWrites = new AtomicLong();
    private final AtomicLong otherRequests = new AtomicLong();
    private final Thread drainer;
    private final Watch watch;
    private volatile boolean running = true;

    /** @param onTransition (pod name, new condition status) for every pod-visible change, on the watch thread */
    public ApiServerObserver(LocalKubernetesApi api, String namespace, BiConsumer<String, String> onTransition) {
        this.api = api;
        this.drainer = new Thread(this::drain, "bench-api-request-drain");
        this.drainer.setDaemon(true);
        this.drainer.start();
        this.watch = api.client().pods().inNamespace(namespace).watch(new Watcher<>() {
            @Override
            public void eventReceived(Action action, Pod pod) {
                String status = condition(pod);
                if (status == null) {
                    return;
                }
                String name = pod.getMetadata().getName();
                String previous = conditionByPod.put(name, status);
                if (!status.equals(previous)) {
                    visibleTransitions.incrementAndGet();
                    onTransition.accept(name, status);
                }
            }

            @Override
            public void onClose(WatcherException cause) {
                if (running) {
                    LOGGER.error("pod watch closed error=\"{}\"", cause == null ? "none" : cause.toString());
                }
            }
        });
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
        return statusPatches.get();
    }

    public long podReads() {
        return podReads.get();
    }

    public long eventWrites() {
        return eventWrites.get();
    }

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
