package io.devhealth.query;

import io.devhealth.query.http.QueryException;
import io.devhealth.query.state.QueryViews;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.processor.state.FleetCounts;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FleetWindowParameterTest {

    @Test
    void shouldReadShortAndIsoDurationsAndDefaultToOneHour() {
        assertThat(QueryRoute.window(null)).isEqualTo(Duration.ofHours(1));
        assertThat(QueryRoute.window("30s")).isEqualTo(Duration.ofSeconds(30));
        assertThat(QueryRoute.window("15m")).isEqualTo(Duration.ofMinutes(15));
        assertThat(QueryRoute.window("6h")).isEqualTo(Duration.ofHours(6));
        assertThat(QueryRoute.window("7d")).isEqualTo(Duration.ofDays(7));
        assertThat(QueryRoute.window("PT90M")).isEqualTo(Duration.ofMinutes(90));
    }

    @Test
    void shouldRejectWhatIsNotAPositiveDuration() {
        for (String bad : new String[] {"soon", "0m", "-5m", "PT0S", "5w", "PT-1H"}) {
            assertThatThrownBy(() -> QueryRoute.window(bad)).as(bad).isInstanceOf(QueryException.class)
                    .hasMessageContaining("window must be a positive duration");
        }
    }

    @Test
    void shouldSortEachDimensionByTransitionsToUnhealthyAndTotalOnlyTheNodeDimension() {
        QueryViews.FleetSummary summary = QueryViews.fleetSummary(Instant.EPOCH, Instant.EPOCH.plusSeconds(60), Duration.ofMinutes(1),
                Map.of("NODE:a", new FleetCounts("", 1, 0, 1), "NODE:b", new FleetCounts("", 3, 1, 0),
                        "REASON:XID-79", new FleetCounts("", 4, 0, 0), "REASON:unknown", new FleetCounts("", 0, 1, 1)), Map.of());

        assertThat(summary.dimensions().get("NODE")).extracting(QueryViews.FleetEntry::key).containsExactly("b", "a");
        assertThat(summary.dimensions().get("DRIVER")).isEmpty();
        assertThat(summary.totals()).isEqualTo(new QueryViews.FleetTotals(4, 1, 1, 6));
    }
}
