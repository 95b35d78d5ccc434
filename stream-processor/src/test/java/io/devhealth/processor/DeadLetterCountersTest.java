package io.devhealth.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.devhealth.runtime.security.RecordVerifier;
import io.micrometer.core.instrument.Counter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The dead-letter counts exist, at 0, before the first dead letter: an {@code increase()} alert sees
 * the first one only as a rise from an earlier sample.
 */
class DeadLetterCountersTest {

    private static List<Counter> counters(TopologyFixture fixture) {
        return List.copyOf(fixture.meters.find(DeadLetterHandler.METER).counters());
    }

    @Test
    void shouldCountUndecodableAndInvalidRecordsOfEveryInputFromZero() {
        try (TopologyFixture fixture = new TopologyFixture()) {
            assertThat(counters(fixture)).extracting(c -> c.getId().getTag("kind"), c -> c.getId().getTag("topic"), Counter::count)
                    .containsExactlyInAnyOrder(
                            tuple("deserialization", "devhealth.node-events", 0.0), tuple("invalid", "devhealth.node-events", 0.0),
                            tuple("deserialization", "devhealth.health-transitions", 0.0),
                            tuple("invalid", "devhealth.health-transitions", 0.0),
                            tuple("deserialization", "devhealth.pod-verdicts", 0.0), tuple("invalid", "devhealth.pod-verdicts", 0.0),
                            tuple("deserialization", "devhealth.pod-device-status", 0.0),
                            tuple("invalid", "devhealth.pod-device-status", 0.0));
        }
    }

    @Test
    void shouldCountUnauthenticatedRecordsFromZeroWhereSignaturesAreChecked() {
        RecordVerifier verifier = new RecordVerifier(List.of("current-cluster-secret-0123456789abcdef".getBytes(StandardCharsets.UTF_8)));
        try (TopologyFixture fixture = new TopologyFixture(o -> o.enforcePrincipals(true), Optional.of(verifier))) {
            assertThat(counters(fixture)).filteredOn(c -> "authentication".equals(c.getId().getTag("kind")))
                    .extracting(c -> c.getId().getTag("topic"), Counter::count)
                    .as("only node-events is signed").containsExactly(tuple("devhealth.node-events", 0.0));
        }
    }
}
