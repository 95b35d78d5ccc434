package io.devhealth.simulators;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class UniqueNamesTest {

    @Test
    void shouldNeverRepeatAName() {
        Set<String> names = new HashSet<>();
        for (int i = 0; i < 10_000; i++) {
            assertThat(names.add(UniqueNames.uniqueName("topic"))).isTrue();
        }
    }

    @Test
    void shouldProduceNamesValidForKafkaAndKubernetes() {
        String name = UniqueNames.uniqueName("device-health");

        assertThat(name).startsWith("device-health-").matches("[a-z0-9]([a-z0-9-]*[a-z0-9])?").hasSizeLessThan(64);
    }

    @Test
    void shouldRejectPrefixesThatWouldMakeInvalidNames() {
        assertThatThrownBy(() -> UniqueNames.uniqueName("Upper")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> UniqueNames.uniqueName("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> UniqueNames.uniqueName("a_b")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> UniqueNames.uniqueName("x".repeat(49))).isInstanceOf(IllegalArgumentException.class);
    }
}
