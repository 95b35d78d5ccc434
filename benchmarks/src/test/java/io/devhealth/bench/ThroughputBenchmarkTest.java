package io.devhealth.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Properties;
import org.junit.jupiter.api.Test;

class ThroughputBenchmarkTest {

    @Test
    void shouldRefuseTheRemovedLegacyInputsFlagNamingIt() {
        Properties properties = new Properties();
        properties.setProperty("devhealth.bench.legacy.inputs", "true");

        assertThatThrownBy(() -> ThroughputBenchmark.rejectRemovedFlags(properties)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("-Ddevhealth.bench.legacy.inputs").hasMessageContaining("no longer an option")
                .hasMessageContaining("node-events");
    }

    @Test
    void shouldRunWithoutTheRemovedFlag() {
        Properties properties = new Properties();
        properties.setProperty("devhealth.bench.cpu.threads", "true");

        assertThatCode(() -> ThroughputBenchmark.rejectRemovedFlags(properties)).doesNotThrowAnyException();
    }

    @Test
    void shouldReadTheFirstContactFloorsAsked() {
        assertThat(ThroughputBenchmark.firstContactFloors("")).isEmpty();
        assertThat(ThroughputBenchmark.firstContactFloors("4, 12")).containsExactly(4, 12);
        assertThatThrownBy(() -> ThroughputBenchmark.firstContactFloors("4,0")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("-Ddevhealth.bench.first.contact.floor");
    }
}
