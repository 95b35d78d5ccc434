package io.devhealth.processor;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.Topics;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class InputTopicsCheckTest {

    private final Topics topics = Topics.withDefaultPrefix();
    private final List<String> inputs = DeviceHealthTopology.inputTopics(topics);

    @Test
    void shouldFindNothingMissingWhenEveryInputTopicExists() {
        Set<String> existing = Set.of(topics.nodeEvents(), topics.healthTransitions(), topics.podVerdicts(), topics.podDeviceStatus(),
                topics.fleetStats(), "someone-elses-topic");

        assertThat(InputTopicsCheck.missing(inputs, existing)).isEmpty();
    }

    @Test
    void shouldNameEachMissingInputTopicInTheTopologysOrder() {
        Set<String> existing = Set.of(topics.nodeEvents(), topics.healthTransitions());

        assertThat(InputTopicsCheck.missing(inputs, existing)).containsExactly(topics.podVerdicts(), topics.podDeviceStatus());
    }

    @Test
    void shouldNotTakeATopicUnderAnotherPrefixForAnInputTopic() {
        Topics other = new Topics("staging.");
        Set<String> existing = Set.of(other.nodeEvents(), other.healthTransitions(), other.podVerdicts(), other.podDeviceStatus());

        assertThat(InputTopicsCheck.missing(inputs, existing)).containsExactlyElementsOf(inputs);
    }

    @Test
    void shouldSayWhichTopicsAreMissingAndWhereTheyAreDeclared() {
        MissingInputTopicsException missing = new MissingInputTopicsException(List.of(topics.podVerdicts()));

        assertThat(missing.topics()).containsExactly("devhealth.pod-verdicts");
        assertThat(missing.getMessage()).contains("devhealth.pod-verdicts").contains("k8s/components/strimzi/topics.yaml");
    }
}
