package io.devhealth.processor.internals;

import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.serde.Encoded;
import io.devhealth.schema.serde.EncodedSerde;

/**
 * How the node processor encodes what it emits: each pod status and transition once, for its topic. The
 * store that keeps it (the node's last statuses, the device's history) and the topic get the same bytes,
 * and the pod claims keep the statuses as they read them, so a status is encoded once on its whole way.
 */
public record OutputEncoding(EncodedSerde<PodDeviceStatus> podStatuses, String podStatusTopic,
                             EncodedSerde<HealthTransition> transitions, String transitionTopic) {

    Encoded<PodDeviceStatus> podStatus(PodDeviceStatus status) {
        return podStatuses.encode(podStatusTopic, status);
    }

    Encoded<HealthTransition> transition(HealthTransition transition) {
        return transitions.encode(transitionTopic, transition);
    }
}
