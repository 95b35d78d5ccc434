package io.devhealth.processor;

import static io.devhealth.processor.TopologyFixture.T0;
import static io.devhealth.processor.TopologyFixture.report;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.PodDeviceStatus;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Every pod status and transition is encoded once on its whole way: for its topic, the store that keeps it
 * (the node's last statuses, the device's history) and, for a status, the pod claims' two stores after the
 * read-back. Typed stores would encode each again, once per store.
 */
class EncodeOnceTest {

    private final AtomicInteger podStatusEncodings = new AtomicInteger();
    private final AtomicInteger transitionEncodings = new AtomicInteger();
    private final TopologyFixture fixture = new TopologyFixture(UnaryOperator.identity(), Optional.empty(),
            serdes -> new ProcessorSerdes(serdes.nodeEvents(), serdes.nodeAllocations(), serdes.nodeDevices(),
                    counted(serdes.podDeviceStatus(), podStatusEncodings), counted(serdes.healthTransitions(), transitionEncodings),
                    serdes.podVerdicts(), serdes.fleetStats(), serdes.deadLetters()));

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    @Test
    void shouldEncodeEachPodStatusAndEachTransitionOnceForTheTopicAndEveryStoreThatKeepsIt() {
        fixture.allocate("train-0", "gpu-0", "gpu-1");
        fixture.send(report("gpu-0", HealthStatus.HEALTHY, T0.plusSeconds(1)));
        fixture.send(report("gpu-1", HealthStatus.UNHEALTHY, T0.plusSeconds(2)));
        fixture.send(report("gpu-1", HealthStatus.HEALTHY, T0.plusSeconds(3)));

        int statuses = fixture.podStatus.readRecordsToList().size();
        int transitions = fixture.transitions.readRecordsToList().size();

        assertThat(statuses).as("the allocation's status and one per change").isEqualTo(4);
        assertThat(transitions).isEqualTo(3);
        assertThat(podStatusEncodings).as("node-pod-status, the topic, pod-status and pod-history").hasValue(statuses);
        assertThat(transitionEncodings).as("device-history and the topic").hasValue(transitions);
    }

    private static <T> Serde<T> counted(Serde<T> serde, AtomicInteger encodings) {
        return Serdes.serdeFrom((topic, value) -> {
            encodings.incrementAndGet();
            return serde.serializer().serialize(topic, value);
        }, serde.deserializer());
    }
}
