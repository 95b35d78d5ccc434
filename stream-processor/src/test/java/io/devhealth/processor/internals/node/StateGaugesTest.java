package io.devhealth.processor.internals.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.processor.internals.fleet.FleetDimensions;
import io.devhealth.schema.avro.HealthStatus;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

class StateGaugesTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final StateGauges gauges = new StateGauges(registry);

    private double devices(String node, String health) {
        return registry.find(StateGauges.DEVICES).tag("node", node).tag("health", health).gauges().stream()
                .mapToDouble(g -> g.value()).sum();
    }

    @Test
    void shouldAddTheTasksCountsAndTakeBackOnlyWhatATaskAdded() {
        StateGauges.Tally first = gauges.tally();
        StateGauges.Tally second = gauges.tally();
        StateGauges.DeviceGroup healthy = new StateGauges.DeviceGroup("c", "n1", "gpu.example.com", null, HealthStatus.HEALTHY);
        first.add(healthy);
        first.add(healthy);
        second.add(healthy);
        assertThat(devices("n1", "healthy")).isEqualTo(3.0);
        assertThat(registry.get(StateGauges.DEVICES).tag("node", "n1").gauge().getId().getTag("product"))
                .as("no product known").isEqualTo(FleetDimensions.UNKNOWN);

        first.withdraw();

        assertThat(devices("n1", "healthy")).isEqualTo(1.0);
        second.move(healthy, new StateGauges.DeviceGroup("c", "n1", "gpu.example.com", null, HealthStatus.UNHEALTHY));
        assertThat(registry.find(StateGauges.DEVICES).tag("health", "healthy").gauges()).as("a count of zero is no series").isEmpty();
        assertThat(devices("n1", "unhealthy")).isEqualTo(1.0);
    }

    @Test
    void shouldKeepShowingANodeTheNextTaskTookUpBeforeTheLastOneWithdrew() {
        StateGauges.Tally leaving = gauges.tally();
        StateGauges.Tally taking = gauges.tally();
        leaving.nodeTime("c", "n1").set(1_000);
        taking.nodeTime("c", "n1").set(2_000);

        leaving.withdraw();

        assertThat(registry.get(StateGauges.NODE_LAST_RECORD).tag("node", "n1").gauge().value()).isEqualTo(2.0);
        taking.withdraw();
        assertThat(registry.find(StateGauges.NODE_LAST_RECORD).gauges()).isEmpty();
    }
}
