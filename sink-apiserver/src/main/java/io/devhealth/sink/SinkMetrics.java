package io.devhealth.sink;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The sink's Micrometer meters (Prometheus names in brackets):
 * <ul>
 *   <li>{@code devhealth.sink.writes} [{@code devhealth_sink_writes_total}]: patches the API server accepted;
 *   <li>{@code devhealth.sink.skipped}{reason=unchanged|repeated|frozen|superseded}: statuses that needed no write;
 *   <li>{@code devhealth.sink.drops}{reason=pod_gone|other_pod}: statuses dropped by decision (history stays in Kafka);
 *   <li>{@code devhealth.sink.dead.letters}{reason=invalid|undecodable}: records sent to the dead-letter topic;
 *   <li>{@code devhealth.sink.api.errors}{class=not_found|conflict|invalid|transient|unreachable}: failed API requests;
 *   <li>{@code devhealth.sink.api.retries}{class=…}: requests repeated after backoff;
 *   <li>{@code devhealth.sink.postmortems}{result=created|updated|deleted}: DevicePostMortem records written or
 *       deleted after their retention;
 *   <li>{@code devhealth.sink.events}{result=created|rate_limited|failed};
 *   <li>{@code devhealth.sink.frozen}: terminated pods whose status was frozen;
 *   <li>{@code devhealth.sink.api.unreachable} gauge (1 while writes wait for the API server, consumption paused);
 *   <li>{@code devhealth.sink.write.duration}: time to bring one pod to its status (reads, retries, patch).
 * </ul>
 */
public final class SinkMetrics {

    private static final String PREFIX = "devhealth.sink.";

    private final MeterRegistry registry;
    private final AtomicInteger apiUnreachable = new AtomicInteger();
    private final Timer writeDuration;

    public SinkMetrics(MeterRegistry registry) {
        this.registry = registry;
        registry.gauge(PREFIX + "api.unreachable", apiUnreachable);
        this.writeDuration = Timer.builder(PREFIX + "write.duration").register(registry);
    }

    public MeterRegistry registry() {
        return registry;
    }

    void written() {
        counter("writes").increment();
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

    void deadLettered(String reason) {
        counter("dead.letters", "reason", reason).increment();
    }

    void apiError(ApiErrorClass errorClass) {
        counter("api.errors", "class", errorClass.tag()).increment();
    }

    void apiRetry(ApiErrorClass errorClass) {
        counter("api.retries", "class", errorClass.tag()).increment();
    }

    void postMortem(String result) {
        counter("postmortems", "result", result).increment();
    }

    void event(String result) {
        counter("events", "result", result).increment();
    }

    void frozen() {
        counter("frozen").increment();
    }

    void apiUnreachable(boolean unreachable) {
        apiUnreachable.set(unreachable ? 1 : 0);
    }

    Timer writeDuration() {
        return writeDuration;
    }

    private Counter counter(String name, String... tags) {
        return registry.counter(PREFIX + name, tags);
    }
}
