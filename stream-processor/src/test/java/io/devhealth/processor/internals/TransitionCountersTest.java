package io.devhealth.processor.internals;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.processor.internals.fleet.FleetDimensions;
import io.devhealth.schema.avro.HealthStatus;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class TransitionCountersTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final TransitionCounters counters = new TransitionCounters(registry);

    private Set<String> reasons() {
        return registry.find(TransitionCounters.NAME).counters().stream().map(c -> c.getId().getTag("reason")).collect(Collectors.toSet());
    }

    @Test
    void shouldCountByFromToAndReasonInLowerCaseHealth() {
        counters.count(HealthStatus.HEALTHY, HealthStatus.UNHEALTHY, "XID-79");
        counters.count(HealthStatus.HEALTHY, HealthStatus.UNHEALTHY, "XID-79");
        counters.count(HealthStatus.UNKNOWN, HealthStatus.HEALTHY, null);

        Counter xid = registry.get(TransitionCounters.NAME).tag("from", "healthy").tag("to", "unhealthy").tag("reason", "XID-79").counter();
        assertThat(xid.count()).isEqualTo(2.0);
        assertThat(registry.get(TransitionCounters.NAME).tag("from", "unknown").tag("to", "healthy").counter().getId().getTag("reason"))
                .isEqualTo(FleetDimensions.UNKNOWN);
    }

    @Test
    void shouldBoundTheReasonsASourceCanGrowTheSeriesWith() {
        counters.count(HealthStatus.HEALTHY, HealthStatus.UNHEALTHY, "GPU fell off the bus at 10:42:17, see dmesg");
        for (int i = 0; i < TransitionCounters.MAX_REASONS + 10; i++) {
            counters.count(HealthStatus.HEALTHY, HealthStatus.UNHEALTHY, "XID-" + i);
        }

        assertThat(reasons()).hasSize(TransitionCounters.MAX_REASONS + 1).contains(TransitionCounters.OTHER, "XID-0")
                .doesNotContain("XID-" + (TransitionCounters.MAX_REASONS + 9));
    }
}
