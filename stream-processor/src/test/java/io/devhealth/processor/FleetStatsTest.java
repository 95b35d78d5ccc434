package io.devhealth.processor;

import static io.devhealth.processor.TopologyFixture.DRIVER;
import static io.devhealth.processor.TopologyFixture.NODE;
import static io.devhealth.processor.TopologyFixture.PRODUCT;
import static io.devhealth.processor.TopologyFixture.T0;
import static io.devhealth.processor.TopologyFixture.report;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import io.devhealth.processor.internals.fleet.FleetWindowKeys;
import io.devhealth.processor.state.FleetCounts;
import io.devhealth.schema.avro.FleetStats;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.StatsDimension;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Windowed transition counts per node, driver, product and reason, in tumbling windows of the transitions' own time. */
class FleetStatsTest {

    /**
     * Reports stay fresh for 10 minutes: only the reports themselves make transitions, unless a test waits for silence.
     * Node time runs up to 32 days ahead of the driver's wall clock here (window grace and retention are about
     * event time), so the input time bounds are widened past that.
     */
    private final TopologyFixture fixture = new TopologyFixture(o -> o.fleetWindow(Duration.ofMinutes(1))
            .timeouts(new TimeoutPolicy(Duration.ofMinutes(10), Map.of()))
            .timeBounds(new TimeBounds(Duration.ofDays(40), Duration.ofDays(40))));

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    /** The latest record per fleet-stats key: the topic is an update stream of each window's counts. */
    private Map<String, FleetStats> latestStats() {
        fixture.flushFleetCounts();
        Map<String, FleetStats> latest = new LinkedHashMap<>();
        for (KeyValue<String, FleetStats> record : fixture.fleetStats.readKeyValuesToList()) {
            latest.put(record.key, record.value);
        }
        return latest;
    }

    @Test
    void shouldCountTransitionsPerNodeDriverProductAndReasonInTumblingWindows() {
        fixture.inventory("gpu-0", "gpu-1");
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        fixture.send(report("gpu-1", HealthStatus.HEALTHY, T0.plusSeconds(2)));
        fixture.send(report("gpu-0", HealthStatus.UNHEALTHY, T0.plusSeconds(30)).setReason("XID-79"));
        fixture.send(report("gpu-1", HealthStatus.UNHEALTHY, T0.plusSeconds(59)).setReason("XID-79"));
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(61)));

        Map<String, FleetStats> stats = latestStats();
        String first = "@" + T0;
        String second = "@" + T0.plusSeconds(60);
        assertThat(stats.get("NODE:" + NODE + first)).satisfies(s -> {
            assertThat(s.getDimension()).isEqualTo(StatsDimension.NODE);
            assertThat(s.getKey()).isEqualTo(NODE);
            assertThat(s.getWindowStart()).isEqualTo(T0);
            assertThat(s.getWindowEnd()).isEqualTo(T0.plusSeconds(60));
            assertThat(List.of(s.getToHealthy(), s.getToUnhealthy(), s.getToUnknown())).containsExactly(2L, 2L, 0L);
        });
        assertThat(stats.get("DRIVER:" + DRIVER + first).getToUnhealthy()).isEqualTo(2);
        assertThat(stats.get("PRODUCT:" + PRODUCT + first).getToUnhealthy()).as("product from the inventory").isEqualTo(2);
        assertThat(stats.get("REASON:XID-79" + first)).extracting(FleetStats::getToUnhealthy, FleetStats::getToHealthy)
                .containsExactly(2L, 0L);
        assertThat(stats.get("NODE:" + NODE + second)).extracting(FleetStats::getToHealthy, FleetStats::getToUnhealthy)
                .as("the next window counts from zero").containsExactly(1L, 0L);
    }

    @Test
    void shouldCountUnknownProductAndSilenceAndKeepTheCountsQueryable() {
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        fixture.runFor(Duration.ofSeconds(610));

        Map<String, FleetStats> stats = latestStats();
        String silentWindow = "@" + T0.plusSeconds(600);
        assertThat(stats.get("PRODUCT:unknown@" + T0)).as("no inventory: product unknown")
                .extracting(FleetStats::getToHealthy, FleetStats::getToUnknown).containsExactly(1L, 0L);
        assertThat(stats.get("REASON:SourceSilent" + silentWindow).getToUnknown()).as("silence counted at its own time").isEqualTo(1);

        KeyValueStore<String, FleetCounts> store = fixture.driver.getKeyValueStore(DeviceHealthTopology.FLEET_STATS_STORE);
        try (KeyValueIterator<String, FleetCounts> all = store.range(FleetWindowKeys.from(T0.minusSeconds(60).toEpochMilli()),
                FleetWindowKeys.through(T0.plusSeconds(3600).toEpochMilli()))) {
            List<KeyValue<String, FleetCounts>> entries = new java.util.ArrayList<>();
            all.forEachRemaining(entries::add);
            assertThat(entries).extracting(e -> FleetWindowKeys.dimensionKey(e.key), e -> e.value.total())
                    .contains(tuple("NODE:" + NODE, 1L), tuple("DRIVER:" + DRIVER, 1L));
            assertThat(entries).filteredOn(e -> FleetWindowKeys.dimensionKey(e.key).equals("NODE:" + NODE))
                    .as("one window per minute with transitions, in time order")
                    .extracting(e -> Instant.ofEpochMilli(FleetWindowKeys.windowStart(e.key))).containsExactly(T0, T0.plusSeconds(600));
        }
    }

    @Test
    void shouldDropTransitionsLaterThanTheGraceAndDeleteWindowsPastRetention() {
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        // The counts reach the counter at the combiner's next flush. The test driver runs every
        // sub-topology in one task with one stream time, so gpu-0 must be flushed before node time jumps
        // two days; in a running processor the counter's task has a stream time of its own.
        fixture.flushFleetCounts();
        fixture.send(report("gpu-1", HealthStatus.HEALTHY, T0.plus(Duration.ofDays(2))));
        // A device first heard of now, with a time two days back: its transition is past the 1-day grace.
        fixture.send(report("gpu-2", HealthStatus.HEALTHY, T0.plusSeconds(10)));

        assertThat(fixture.meters.counter("devhealth.processor.fleet.late").count()).isEqualTo(4.0); // one per dimension
        assertThat(latestStats()).containsKey("NODE:" + NODE + "@" + T0).doesNotContainKey("DRIVER:" + DRIVER + "@" + T0.plusSeconds(10));
        assertThat(countsBetween(T0, T0.plusSeconds(3600))).as("gpu-2 not counted").containsEntry("NODE:" + NODE, 1L);

        fixture.send(report("gpu-1", HealthStatus.UNHEALTHY, T0.plus(Duration.ofDays(32))));

        assertThat(countsBetween(T0, T0.plusSeconds(3600))).as("windows older than the 30-day retention deleted").isEmpty();
        assertThat(countsBetween(T0.plus(Duration.ofDays(32)), T0.plus(Duration.ofDays(32)))).containsEntry("NODE:" + NODE, 1L);
    }

    private Map<String, Long> countsBetween(Instant from, Instant to) {
        fixture.flushFleetCounts();
        KeyValueStore<String, FleetCounts> store = fixture.driver.getKeyValueStore(DeviceHealthTopology.FLEET_STATS_STORE);
        Map<String, Long> totals = new LinkedHashMap<>();
        try (KeyValueIterator<String, FleetCounts> all = store.range(FleetWindowKeys.from(from.toEpochMilli()),
                FleetWindowKeys.through(to.toEpochMilli()))) {
            all.forEachRemaining(e -> totals.merge(FleetWindowKeys.dimensionKey(e.key), e.value.total(), Long::sum));
        }
        return totals;
    }
}
