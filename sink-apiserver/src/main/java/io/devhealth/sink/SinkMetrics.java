package io.devhealth.sink;

import io.devhealth.schema.avro.Verdict;
import io.devhealth.sink.condition.PodStatusWriter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * The sink's Micrometer meters (Prometheus names in brackets):
 * <ul>
 *   <li>{@code devhealth.sink.writes} [{@code devhealth_sink_writes_total}]: patches the API server accepted;
 *   <li>{@code devhealth.sink.skipped}{reason=unchanged|repeated|frozen|superseded|released}: statuses that needed no write
 *   (released: a node's tombstone for a pod it no longer reaches);
 *   <li>{@code devhealth.sink.drops}{reason=pod_gone|other_pod}: statuses dropped by decision (history stays in Kafka);
 *   <li>{@code devhealth.sink.dead.letters}{reason=invalid|undecodable|unexpected}: records sent to the dead-letter topic
 *       (every reason from zero, so that the first dead letter is an increase Prometheus can see);
 *   <li>{@code devhealth.sink.api.errors}{class=not_found|conflict|invalid|transient|unreachable}: failed API requests
 *       (every class from zero);
 *   <li>{@code devhealth.sink.api.retries}{class=…}: requests repeated after backoff;
 *   <li>{@code devhealth.sink.api.requests} [{@code devhealth_sink_api_requests_total}]: requests sent to the API
 *       server, every attempt counted (what the sink costs the API server);
 *   <li>{@code devhealth.sink.pod.cache}{result=hit|miss}: lookups of a pod in the sink's pod cache before a write
 *       (miss: not there, or the cache has not synced yet; the pod is then read from the API server);
 *   <li>{@code devhealth.sink.pod.rechecks}{reason=conflict|terminated|other_pod|unchanged}: pods read from the API
 *       server although the cache had them: after a failed write (unless the cache already had a newer copy), for a
 *       terminated pod's record (it needs the whole pod), or because the cached copy said the status is for another
 *       pod or already shown (not writing is never decided from the cache). Every GET of a pod is one miss or one
 *       recheck;
 *   <li>{@code devhealth.sink.postmortems}{result=created|updated|deleted}: DevicePostMortem records written or
 *       deleted after their retention;
 *   <li>{@code devhealth.sink.events}{result=created|rate_limited|failed|dropped};
 *   <li>{@code devhealth.sink.frozen}: terminated pods whose status was frozen;
 *   <li>{@code devhealth.sink.verdicts} [{@code devhealth_sink_verdicts_total}]{verdict=DEVICE_FAILURE|NO_DEVICE_FAILURE|UNKNOWN}:
 *       verdicts published to pod-verdicts (every verdict from zero; a repeated delivery counts again);
 *   <li>{@code devhealth.sink.verdicts.failed}{error=<exception class>}: verdicts given up on an error repeating cannot
 *       mend (authorization, serialization); retriable errors repeat the freeze instead;
 *   <li>{@code devhealth.sink.api.unreachable} gauge (1 while writes wait for the API server, consumption paused);
 *   <li>{@code devhealth.sink.write.duration}: time to bring one pod to its status (reads, retries, patch);
 *   <li>{@code devhealth.sink.taint.rules} [{@code devhealth_sink_taint_rules_total}]{action=created|deleted|would_create|would_delete}:
 *       DeviceTaintRules of retry elsewhere created and deleted, or in dry-run those that would have been
 *       (every action from zero once the feature is on);
 *   <li>{@code devhealth.sink.taint.rules.refused}{reason=node_cap|breaker}: devices that needed a rule and got none;
 *   <li>{@code devhealth.sink.taint.rules.skipped}{reason=taint_source|slice_tainted|not_dra}: Unhealthy devices that
 *       need no rule of devhealth's (their driver tainted them) or cannot have one (not a DRA device);
 *   <li>{@code devhealth.sink.taint.breaker.open} gauge (1 while the fleet circuit breaker refuses every new rule);
 *   <li>{@code devhealth.sink.end.to.end.latency} [{@code devhealth_sink_end_to_end_latency_seconds}, a histogram]:
 *       from a device's change at its node (the pod-device-status record's timestamp: the node's time of the
 *       report, or of the silence deadline) to the pod's write in Kubernetes.
 * </ul>
 */
public final class SinkMetrics {

    private static final String PREFIX = "devhealth.sink.";

    private final MeterRegistry registry;
    private final AtomicInteger apiUnreachable = new AtomicInteger();
    private final AtomicInteger taintBreakerOpen = new AtomicInteger();
    static final List<String> TAINT_RULE_ACTIONS = List.of("created", "deleted", "would_create", "would_delete");
    static final List<String> TAINT_RULE_REFUSALS = List.of("node_cap", "breaker");
    /** The reasons a record is dead-lettered for. */
    static final List<String> DEAD_LETTER_REASONS = List.of("invalid", "undecodable", "unexpected");
    /** Why a pod the cache had was read from the API server all the same ({@link PodStatusWriter}). */
    static final List<String> POD_RECHECK_REASONS = List.of("conflict", "terminated", "other_pod", "unchanged");
    /**
     * The end-to-end latency's buckets: a change normally reaches the pod within a second or two (a
     * collector poll, a commit interval, a batch); tens of seconds to minutes is an outage or a backlog.
     */
    private static final Duration[] LATENCY_BUCKETS = Stream.of(0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
            .map(seconds -> Duration.ofMillis((long) (seconds * 1000))).toArray(Duration[]::new);

    private final Timer writeDuration;
    private final Timer endToEnd;

    public SinkMetrics(MeterRegistry registry) {
        this.registry = registry;
        registry.gauge(PREFIX + "api.unreachable", apiUnreachable);
        this.writeDuration = Timer.builder(PREFIX + "write.duration").register(registry);
        this.endToEnd = Timer.builder(PREFIX + "end.to.end.latency")
                .description("From a device's change at its node (the status record's timestamp) to the pod's write in Kubernetes")
                .serviceLevelObjectives(LATENCY_BUCKETS)
                .register(registry);
        DEAD_LETTER_REASONS.forEach(reason -> counter("dead.letters", "reason", reason));
        for (ApiErrorClass errorClass : ApiErrorClass.values()) {
            counter("api.errors", "class", errorClass.tag());
        }
        counter("writes");
        counter("api.requests");
        counter("pod.cache", "result", "hit");
        counter("pod.cache", "result", "miss");
        POD_RECHECK_REASONS.forEach(reason -> counter("pod.rechecks", "reason", reason));
        for (Verdict verdict : Verdict.values()) {
            counter("verdicts", "verdict", verdict.name());
        }
    }

    public MeterRegistry registry() {
        return registry;
    }

    public void written() {
        counter("writes").increment();
    }

    /** One request sent to the API server (each attempt of a retried one counts). */
    void apiRequest() {
        counter("api.requests").increment();
    }

    /** A lookup in the pod cache before a write. */
    public void podCache(boolean hit) {
        counter("pod.cache", "result", hit ? "hit" : "miss").increment();
    }

    /** A pod read from the API server although the cache had it; {@code reason} one of {@link #POD_RECHECK_REASONS}. */
    public void podRecheck(String reason) {
        counter("pod.rechecks", "reason", reason).increment();
    }

    void skipped(String reason) {
        counter("skipped", "reason", reason).increment();
    }

    void skipped(String reason, int count) {
        counter("skipped", "reason", reason).increment(count);
    }

    void dropped(String reason) {
        counter("drops", "reason", reason).increment();
    }

    public void deadLettered(String reason) {
        counter("dead.letters", "reason", reason).increment();
    }

    void apiError(ApiErrorClass errorClass) {
        counter("api.errors", "class", errorClass.tag()).increment();
    }

    void apiRetry(ApiErrorClass errorClass) {
        counter("api.retries", "class", errorClass.tag()).increment();
    }

    public void postMortem(String result) {
        counter("postmortems", "result", result).increment();
    }

    public void event(String result) {
        counter("events", "result", result).increment();
    }

    public void verdictFailed(String error) {
        counter("verdicts.failed", "error", error).increment();
    }

    public void verdictPublished(Verdict verdict) {
        counter("verdicts", "verdict", verdict.name()).increment();
    }

    public void frozen() {
        counter("frozen").increment();
    }

    /** The retry-elsewhere meters, each from zero: registered only where the feature is on. */
    public void registerTaintRules() {
        registry.gauge(PREFIX + "taint.breaker.open", taintBreakerOpen);
        TAINT_RULE_ACTIONS.forEach(action -> counter("taint.rules", "action", action));
        TAINT_RULE_REFUSALS.forEach(reason -> counter("taint.rules.refused", "reason", reason));
    }

    public void taintRule(String action) {
        counter("taint.rules", "action", action).increment();
    }

    public void taintRuleRefused(String reason) {
        counter("taint.rules.refused", "reason", reason).increment();
    }

    public void taintRuleSkipped(String reason) {
        counter("taint.rules.skipped", "reason", reason).increment();
    }

    public void taintBreakerOpen(int open) {
        taintBreakerOpen.set(open);
    }

    void apiUnreachable(boolean unreachable) {
        apiUnreachable.set(unreachable ? 1 : 0);
    }

    Timer writeDuration() {
        return writeDuration;
    }

    /** A status written whose change happened at {@code changedAt} (node time); a node clock ahead of ours counts as zero. */
    void delivered(Instant changedAt, Instant writtenAt) {
        Duration latency = Duration.between(changedAt, writtenAt);
        endToEnd.record(latency.isNegative() ? Duration.ZERO : latency);
    }

    private Counter counter(String name, String... tags) {
        return registry.counter(PREFIX + name, tags);
    }
}
