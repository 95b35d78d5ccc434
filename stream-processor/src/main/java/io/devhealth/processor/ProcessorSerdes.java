package io.devhealth.processor;

import io.devhealth.processor.internals.input.SignedRecordDeserializer;
import io.devhealth.runtime.security.RecordVerifier;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.avro.FleetStats;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeDevices;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.TerminatedPod;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.Encoded;
import io.devhealth.schema.serde.EncodedSerde;
import io.devhealth.schema.serde.SchemaRegistryClient;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Optional;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;

/** The serdes of every topic of the topology (and the stores that hold topic records), all over one schema registry. */
public record ProcessorSerdes(
        Serde<NodeEvent> nodeEvents,
        Serde<NodeAllocations> nodeAllocations,
        Serde<NodeDevices> nodeDevices,
        Serde<PodDeviceStatus> podDeviceStatus,
        Serde<HealthTransition> healthTransitions,
        Serde<TerminatedPod> podVerdicts,
        Serde<FleetStats> fleetStats,
        Serde<DeadLetter> deadLetters) {

    public static ProcessorSerdes over(SchemaRegistryClient registry) {
        return over(registry, true);
    }

    /**
     * @param autoRegister whether the serializers register a missing schema; without it every subject
     *     they write, the stores' changelogs included ({@link ProcessorSchemas}), must be registered ahead
     */
    public static ProcessorSerdes over(SchemaRegistryClient registry, boolean autoRegister) {
        return new ProcessorSerdes(
                AvroSerde.of(NodeEvent.class, registry, false, autoRegister),
                AvroSerde.of(NodeAllocations.class, registry, false, autoRegister),
                AvroSerde.of(NodeDevices.class, registry, false, autoRegister),
                AvroSerde.of(PodDeviceStatus.class, registry, false, autoRegister),
                AvroSerde.of(HealthTransition.class, registry, false, autoRegister),
                AvroSerde.of(TerminatedPod.class, registry, false, autoRegister),
                AvroSerde.of(FleetStats.class, registry, false, autoRegister),
                AvroSerde.of(DeadLetter.class, registry, false, autoRegister));
    }

    /**
     * Pod statuses with their bytes ({@link Encoded}): what the topology keeps and writes them as, so that a status
     * is encoded once for the node's store and the topic, and kept by the pod claims as it was read.
     */
    public EncodedSerde<PodDeviceStatus> encodedPodDeviceStatus() {
        return EncodedSerde.over(podDeviceStatus);
    }

    /** Transitions with their bytes ({@link Encoded}): encoded once for the device's history and the topic. */
    public EncodedSerde<HealthTransition> encodedHealthTransitions() {
        return EncodedSerde.over(healthTransitions);
    }

    /**
     * These serdes, reading the collectors' topic (node-events) only once each record's node signature
     * verifies ({@link SignedRecordDeserializer}); unchanged when {@code verifier} is empty
     * ({@code principals.enforce} off, {@link ProcessorConfig#recordVerifier()}).
     */
    public ProcessorSerdes authenticated(Topics topics, Optional<RecordVerifier> verifier, MeterRegistry meters) {
        if (verifier.isEmpty()) {
            return this;
        }
        RecordVerifier keys = verifier.get();
        return new ProcessorSerdes(
                verified(nodeEvents, topics.nodeEvents(), "node-events", keys, meters),
                nodeAllocations, nodeDevices, podDeviceStatus, healthTransitions, podVerdicts, fleetStats, deadLetters);
    }

    private static <T> Serde<T> verified(Serde<T> serde, String topic, String input, RecordVerifier verifier, MeterRegistry meters) {
        return Serdes.serdeFrom(serde.serializer(), new SignedRecordDeserializer<>(serde.deserializer(), topic, input, verifier, meters));
    }
}
