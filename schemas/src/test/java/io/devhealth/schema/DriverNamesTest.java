package io.devhealth.schema;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DriverNamesTest {

    @ParameterizedTest
    @ValueSource(strings = {"gpu.nvidia.com", "gpu.devhealth.test", "a", "dra-1.example.com", "0.example"})
    void shouldAcceptDnsSubdomains(String name) {
        assertThat(DriverNames.violation(name)).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", ".", "..", "../csi", "a/b", "Gpu.example.com", "gpu..example.com", "-gpu.example.com",
            "gpu.example.com-", "gpu.example.com.", "gpu_example.com", "gpu example", "gpu.example.com\u0000"})
    void shouldRefuseWhatIsNoDnsSubdomain(String name) {
        assertThat(DriverNames.violation(name)).isPresent();
    }

    @Test
    void shouldRefuseNamesLongerThanTheResourceApiAllows() {
        assertThat(DriverNames.violation("a".repeat(63))).isEmpty();
        assertThat(DriverNames.violation("a".repeat(64))).hasValueSatisfying(v -> assertThat(v).contains("63"));
    }
}
