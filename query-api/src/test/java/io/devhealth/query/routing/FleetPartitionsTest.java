package io.devhealth.query.routing;

import io.devhealth.query.http.QueryException;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FleetPartitionsTest {

    @Test
    void shouldCarryEachStoresPartitionsThroughTheHeader() {
        FleetPartitions asked = FleetPartitions.of(List.of(new FleetPartitions.Part("fleet-stats", 2),
                new FleetPartitions.Part("fleet-stats", 0), new FleetPartitions.Part("fleet-verdicts", 1)));

        assertThat(asked.header()).isEqualTo("fleet-stats=0,2;fleet-verdicts=1");
        assertThat(FleetPartitions.parse(asked.header())).isEqualTo(asked);
        assertThat(asked.of("fleet-stats")).containsExactlyInAnyOrder(0, 2);
    }

    @Test
    void shouldCountNothingOfAStoreTheHeaderDoesNotName() {
        FleetPartitions asked = FleetPartitions.parse("fleet-stats=1");

        assertThat(asked.of("fleet-verdicts")).isEmpty();
        assertThat(FleetPartitions.parse("fleet-stats=").byStore()).isEqualTo(Map.of("fleet-stats", Set.of()));
    }

    @Test
    void shouldRefuseAMalformedHeaderWithA400() {
        assertThatThrownBy(() -> FleetPartitions.parse("fleet-stats")).isInstanceOfSatisfying(QueryException.class,
                e -> assertThat(e.status()).isEqualTo(400));
        assertThatThrownBy(() -> FleetPartitions.parse("fleet-stats=0,x")).isInstanceOfSatisfying(QueryException.class,
                e -> assertThat(e.getMessage()).contains("no number"));
    }
}
