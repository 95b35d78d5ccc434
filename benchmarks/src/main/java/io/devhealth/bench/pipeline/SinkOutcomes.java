package io.devhealth.bench.pipeline;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the sink did with the statuses it was given, read from its own meters: written, and every
 * reason it wrote nothing. A status the sink refuses never reaches the API server, so the server's
 * side ({@link ApiServerObserver}) cannot tell a refused write from a slow one; these counters can.
 * The identity check's refusals (the status's node is not the pod's {@code spec.nodeName}, or its
 * claims are not the pod's) count as {@code drops{reason=other_pod}}.
 */
public final class SinkOutcomes {

    private static final String PREFIX = "devhealth.sink.";

    private final MeterRegistry registry;

    public SinkOutcomes(MeterRegistry registry) {
        this.registry = registry;
    }

    /** Statuses the API server accepted. */
    public long written() {
        return Math.round(registry.find(PREFIX + "writes").counters().stream().mapToDouble(Counter::count).sum());
    }

    /** Statuses refused by the sink's identity check: written to no pod. */
    public long refusedByIdentityCheck() {
        return byTag("drops", "reason").getOrDefault("other_pod", 0L);
    }

    /**
     * One line: written, refused, dropped, skipped and dead-lettered, pod cache lookups, pods read again
     * and Events (created, and those the Event queue dropped), each by reason where not zero.
     */
    public String summary() {
        return String.format(Locale.ROOT, "%,d written; %,d refused by the identity check (status's node or claims not the pod's); "
                        + "dropped %s; skipped %s; dead-lettered %s; pod cache %s; pods read again %s; Events %s", written(),
                refusedByIdentityCheck(), nonZero(byTag("drops", "reason")), nonZero(byTag("skipped", "reason")),
                nonZero(byTag("dead.letters", "reason")), nonZero(byTag("pod.cache", "result")), nonZero(byTag("pod.rechecks", "reason")),
                nonZero(byTag("events", "result")));
    }

    private Map<String, Long> byTag(String name, String tag) {
        Map<String, Long> counts = new TreeMap<>();
        registry.find(PREFIX + name).counters().forEach(counter -> counts.merge(String.valueOf(counter.getId().getTag(tag)),
                Math.round(counter.count()), Long::sum));
        return counts;
    }

    private static String nonZero(Map<String, Long> counts) {
        String listed = counts.entrySet().stream().filter(e -> e.getValue() > 0)
                .map(e -> String.format(Locale.ROOT, "%s=%,d", e.getKey(), e.getValue())).reduce((a, b) -> a + ", " + b).orElse("");
        return listed.isEmpty() ? "none" : listed;
    }
}
