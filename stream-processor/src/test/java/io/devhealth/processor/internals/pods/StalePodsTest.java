package io.devhealth.processor.internals.pods;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.processor.internals.stores.StateKeys;
import io.devhealth.schema.avro.PodAllocation;
import java.util.List;
import org.junit.jupiter.api.Test;

class StalePodsTest {

    private static final PodAllocation POD = new PodAllocation("ns", "train", List.of());
    private static final String POD_KEY = StateKeys.pod("ns", "train");

    @Test
    void shouldTakeAPodOnlyWhenTheGivenDeviceMadeItStale() {
        StalePods stale = new StalePods();
        stale.mark("n1", POD, 10, "gpu-0");

        assertThat(stale.takeIfChangedBy("n1", POD_KEY, "gpu-1")).isNull();
        assertThat(stale.take("n1")).containsOnlyKeys(POD_KEY); // still marked: another device's change is no reason to emit early

        stale.mark("n1", POD, 20, "gpu-0");
        stale.mark("n1", POD, 30, "gpu-1");
        StalePods.Stale taken = stale.takeIfChangedBy("n1", POD_KEY, "gpu-1");
        assertThat(taken.pod()).isEqualTo(POD);
        assertThat(taken.at()).isEqualTo(30);
        assertThat(stale.isEmpty()).isTrue();
    }

    @Test
    void shouldNotTakeAPodMadeStaleByAllocationsForADeviceChange() {
        StalePods stale = new StalePods();
        stale.mark("n1", POD, 10, null);

        assertThat(stale.takeIfChangedBy("n1", POD_KEY, "gpu-0")).isNull();
        assertThat(stale.takeIfChangedBy("n2", POD_KEY, "gpu-0")).isNull();
        assertThat(stale.nodes()).containsExactly("n1");
    }
}
