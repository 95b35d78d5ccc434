package io.devhealth.sink.condition;

import io.devhealth.sink.ApiCallPolicy;
import io.devhealth.sink.SinkMetrics;
import io.devhealth.sink.postmortem.DevicePostMortem;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates a core/v1 Event on the pod for each device-health transition that affects it:
 * {@code DeviceUnhealthy} and {@code DeviceHealthUnknown} (Warning), {@code DeviceRecovered} (Normal); and
 * {@code DevicePostMortemRecorded} when a terminated pod's {@link DevicePostMortem} is made.
 * Rate-limited per pod (a flapping GPU must not flood etcd): {@code burst} events at once, then one per
 * {@code interval}. Events are best-effort: a failure is logged and counted, never retried, and never
 * fails the status write (the condition already says the same).
 *
 * <p>Events go behind the conditions: the writer only queues one, and a few threads of their own create
 * them ({@code events.concurrency}), so that during a fleet-wide incident the API server's seats go to
 * the conditions a Job's {@code podFailurePolicy} reads, and an Event never holds a condition write's
 * slot. When the queue is full ({@code events.queue}) the Event is dropped and counted
 * ({@code result=dropped}), as Kubernetes' own event recorder does: client-go's broadcaster keeps 1,000
 * events and drops what does not fit rather than slow the component that records them.
 */
public final class PodEventRecorder implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(PodEventRecorder.class);
    static final String COMPONENT = "devhealth-sink";
    private static final int MAX_MESSAGE_BYTES = 1024;
    private static final int MAX_TRACKED_PODS = 10_000;

    private final KubernetesClient client;
    private final ApiCallPolicy api;
    private final SinkMetrics metrics;
    private final Clock clock;
    private final boolean enabled;
    private final RateLimiterConfig perPod;
    private final String instance;
    private final ExecutorService lane;
    private final Map<String, RateLimiter> limiters = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, RateLimiter> eldest) {
            return size() > MAX_TRACKED_PODS;
        }
    };

    /** Events created by {@code concurrency} threads of their own, at most {@code queue} waiting. */
    public PodEventRecorder(KubernetesClient client, ApiCallPolicy api, SinkMetrics metrics, Clock clock, boolean enabled, int burst,
                            Duration interval, int concurrency, int queue) {
        this(client, api, metrics, clock, enabled, burst, interval, lane(concurrency, queue));
    }

    /** {@code lane} creates the Events; it is shut down by {@link #close()}. */
    PodEventRecorder(KubernetesClient client, ApiCallPolicy api, SinkMetrics metrics, Clock clock, boolean enabled, int burst,
                     Duration interval, ExecutorService lane) {
        this.client = client;
        this.api = api;
        this.metrics = metrics;
        this.clock = clock;
        this.enabled = enabled;
        this.perPod = RateLimiterConfig.custom()
                .limitForPeriod(burst)
                .limitRefreshPeriod(interval.multipliedBy(burst))
                .timeoutDuration(Duration.ZERO)
                .build();
        this.instance = hostname();
        this.lane = lane;
    }

    static ExecutorService lane(int concurrency, int queue) {
        AtomicInteger threads = new AtomicInteger();
        return new ThreadPoolExecutor(concurrency, concurrency, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(queue), task -> {
            Thread thread = new Thread(task, "devhealth-sink-events-" + threads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        }, new ThreadPoolExecutor.AbortPolicy());
    }

    /** The condition went from {@code from} (null: none yet) to {@code to}; records the event if it is one. */
    void transition(Pod pod, String from, String to, String message) {
        if (!enabled || to.equals(from)) {
            return;
        }
        String reason;
        String type;
        switch (to) {
            case "False" -> {
                reason = "DeviceUnhealthy";
                type = "Warning";
            }
            case "Unknown" -> {
                reason = "DeviceHealthUnknown";
                type = "Warning";
            }
            default -> {
                if (from == null) {
                    return; // first sight of a healthy pod is not news
                }
                reason = "DeviceRecovered";
                type = "Normal";
            }
        }
        create(pod, reason, type, message, "status.conditions{" + PodStatusWriter.CONDITION_TYPE + "}");
    }

    /**
     * A post-mortem record was made for the terminated pod: the Event tells {@code kubectl describe pod}
     * readers where the detail is. Warning when a device was not healthy at termination.
     */
    void recorded(Pod pod, String health, String message) {
        if (!enabled) {
            return;
        }
        create(pod, "DevicePostMortemRecorded", "Healthy".equals(health) ? "Normal" : "Warning",
                "device health at termination: " + message + " (kubectl get devicepostmortem " + pod.getMetadata().getName()
                        + " -n " + pod.getMetadata().getNamespace() + " -o yaml)", null);
    }

    private void create(Pod pod, String reason, String type, String message, String fieldPath) {
        String key = pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
        if (!limiter(key).acquirePermission()) {
            metrics.event("rate_limited");
            LOGGER.debug("pod event rate-limited pod={} reason={}", key, reason);
            return;
        }
        Instant now = clock.instant().truncatedTo(ChronoUnit.SECONDS);
        Event event = new EventBuilder()
                .withNewMetadata()
                    .withNamespace(pod.getMetadata().getNamespace())
                    .withName(pod.getMetadata().getName() + "." + Long.toHexString(clock.millis()) + String.format(Locale.ROOT, "%04x",
                            ThreadLocalRandom.current().nextInt(0x10000)))
                .endMetadata()
                .withNewInvolvedObject()
                    .withApiVersion("v1")
                    .withKind("Pod")
                    .withNamespace(pod.getMetadata().getNamespace())
                    .withName(pod.getMetadata().getName())
                    .withUid(pod.getMetadata().getUid())
                    .withFieldPath(fieldPath)
                .endInvolvedObject()
                .withType(type)
                .withReason(reason)
                .withMessage(io.devhealth.schema.HealthMessages.truncateUtf8(message, MAX_MESSAGE_BYTES))
                .withNewSource().withComponent(COMPONENT).endSource()
                .withReportingComponent("devhealth.io/sink")
                .withReportingInstance(instance)
                .withFirstTimestamp(now.toString())
                .withLastTimestamp(now.toString())
                .withCount(1)
                .build();
        try {
            lane.execute(() -> send(event, key));
        } catch (RejectedExecutionException e) {
            metrics.event("dropped");
            LOGGER.debug("pod event dropped, queue full pod={} reason={}", key, reason);
        }
    }

    private void send(Event event, String key) {
        try {
            api.once(() -> client.v1().events().inNamespace(event.getMetadata().getNamespace()).resource(event).create());
            metrics.event("created");
            LOGGER.info("pod event created pod={} reason={} type={}", key, event.getReason(), event.getType());
        } catch (RuntimeException e) {
            metrics.event("failed");
            LOGGER.warn("pod event not created pod={} reason={} error=\"{}\"", key, event.getReason(), e.getMessage());
        }
    }

    /**
     * Gives the queued Events a moment to go out, then drops the rest (counted): a stopping sink does not
     * wait on best-effort writes.
     */
    @Override
    public void close() throws InterruptedException {
        lane.shutdown();
        if (!lane.awaitTermination(2, TimeUnit.SECONDS)) {
            List<Runnable> left = lane.shutdownNow();
            left.forEach(task -> metrics.event("dropped"));
            LOGGER.info("pod events dropped at shutdown count={}", left.size());
        }
    }

    private synchronized RateLimiter limiter(String pod) {
        // The limiter reads time from the injected clock, so tests need no sleeping.
        return limiters.computeIfAbsent(pod, name -> RateLimiter.of("events-" + name, perPod,
                () -> clock.instant().getEpochSecond() * 1_000_000_000L + clock.instant().getNano()));
    }

    private static String hostname() {
        String host = System.getenv("HOSTNAME");
        return host == null || host.isEmpty() ? COMPONENT : host;
    }
}
