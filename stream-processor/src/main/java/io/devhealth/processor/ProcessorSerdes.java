package io.devhealth.processor;

import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.avro.DeviceReportEnvelope;
import io.devhealth.schema.avro.FleetStats;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeDevices;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistryClient;
import org.apache.kafka.common.serialization.Serde;

/** The serdes of every topic of the topology (and the stores that hold topic records), all over one schema registry. */
public record ProcessorSerdes(
        Serde<DeviceReportEnvelope> deviceReports,
        Serde<NodeAllocations> nodeAllocations,
        Serde<NodeDevices> nodeDevices,
        Serde<PodDeviceStatus> podDeviceStatus,
        Serde<HealthTransition> healthTransitions,
        Serde<FleetStats> fleetStats,
        Serde<DeadLetter> deadLetters) {

    public static ProcessorSerdes over(SchemaRegistryClient registry) {
        return new ProcessorSerdes(
                AvroSerde.of(DeviceReportEnvelope.class, registry),
                AvroSerde.of(NodeAllocations.class, registry),
                AvroSerde.of(NodeDevices.class, registry),
                AvroSerde.of(PodDeviceStatus.class, registry),
                AvroSerde.of(HealthTransition.class, registry),
                AvroSerde.of(FleetStats.class, registry),
                AvroSerde.of(DeadLetter.class, registry));
    }
}
