package io.devhealth.processor.internals;

import io.devhealth.processor.internals.fleet.FleetDimensions;
import io.devhealth.schema.avro.HealthStatus;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * {@code devhealth_processor_transitions_total{from,to,reason}}: changes of a device's effective
 * health.
 *
 * <p>A reason is whatever code a source sent ({@code XID-79}, {@code SourceSilent}, {@code Flapping},
 * …), so the values a label takes are bounded here: the first {@value #MAX_REASONS} distinct reasons
 * that look like codes are kept as they are, every other one counts as {@value #OTHER}. A source that
 * sends free text as its reason cannot grow the series without bound.
 *
 * <p>Stream thread only (one per task).
 */
final class TransitionCounters {

    static final String NAME = "devhealth.processor.transitions";
    static final int MAX_REASONS = 64;
    static final String OTHER = "other";
    private static final Pattern CODE = Pattern.compile("[A-Za-z0-9_.:-]{1,48}");

    private final MeterRegistry meters;
    private final Map<Key, Counter> counters = new HashMap<>();
    private final Map<String, String> reasons = new HashMap<>();

    TransitionCounters(MeterRegistry meters) {
        this.meters = meters;
    }

    void count(HealthStatus from, HealthStatus to, String reason) {
        Key key = new Key(from, to, reasonLabel(reason));
        Counter counter = counters.get(key);
        if (counter == null) {
            counter = Counter.builder(NAME)
                    .description("Changes of a device's effective health, by the health before and after and the reason")
                    .tag("from", from.name().toLowerCase(Locale.ROOT))
                    .tag("to", to.name().toLowerCase(Locale.ROOT))
                    .tag("reason", key.reason())
                    .register(meters);
            counters.put(key, counter);
        }
        counter.increment();
    }

    private String reasonLabel(String reason) {
        if (reason == null || reason.isEmpty()) {
            return FleetDimensions.UNKNOWN;
        }
        String known = reasons.get(reason);
        if (known != null) {
            return known;
        }
        String label = reasons.size() < MAX_REASONS && CODE.matcher(reason).matches() ? reason : OTHER;
        if (!OTHER.equals(label)) {
            reasons.put(reason, label);
        }
        return label;
    }

    private record Key(HealthStatus from, HealthStatus to, String reason) {
    }
}
