package io.devhealth.schema;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.HealthStatus;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class HealthWordsTest {

    @Test
    void shouldSpellEveryHealthAsKubernetesDoes() {
        assertThat(Arrays.stream(HealthStatus.values()).map(HealthWords::of))
                .containsExactlyInAnyOrder("Healthy", "Unhealthy", "Unknown");
        assertThat(HealthWords.of(HealthStatus.UNHEALTHY)).isEqualTo("Unhealthy");
    }

    @Test
    void shouldParseBackWhatItSpells() {
        for (HealthStatus health : HealthStatus.values()) {
            assertThat(HealthWords.parse(HealthWords.of(health))).contains(health);
        }
    }

    @Test
    void shouldNotParseTheEnumSymbolsOrOtherWords() {
        assertThat(HealthWords.parse("UNHEALTHY")).isEmpty();
        assertThat(HealthWords.parse("healthy")).isEmpty();
        assertThat(HealthWords.parse("Degraded")).isEmpty();
        assertThat(HealthWords.parse(null)).isEmpty();
    }
}
