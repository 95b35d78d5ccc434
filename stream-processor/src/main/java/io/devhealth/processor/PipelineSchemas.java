package io.devhealth.processor;

import io.devhealth.processor.internals.stores.TopologyNames;
import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.avro.FleetStats;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.NodeDevices;
import io.devhealth.schema.avro.NodeEvent;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.TerminatedPod;
import io.devhealth.schema.serde.SchemaRegistryClient;
import io.devhealth.schema.serde.TopicNameStrategy;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.avro.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every schema registry subject the pipeline's serializers write, with its writer schema: the value of
 * each Avro topic (the collector's node-events, the processor's outputs, the sink's verdicts, everyone's
 * dead letters) and
 * the changelogs of the processor's stores that hold Avro records. With
 * {@code auto.register.schemas=false} the services only look these up, so they are registered ahead
 * ({@code devhealth schemas register}); a subject missing here stops the service that writes it, which
 * the pipeline tests run without auto-registration would show.
 */
public final class PipelineSchemas {

    private static final Logger LOGGER = LoggerFactory.getLogger(PipelineSchemas.class);

    private PipelineSchemas() {}

    /**
     * @param applicationId the processor's {@code application.id}: Kafka Streams names a store's changelog
     *     {@code <application.id>-<store>-changelog}
     * @return subject to writer schema, in a stable order
     */
    public static Map<String, Schema> subjects(Topics topics, String applicationId) {
        Map<String, Schema> subjects = new LinkedHashMap<>();
        value(subjects, topics.nodeEvents(), NodeEvent.getClassSchema());
        value(subjects, topics.podDeviceStatus(), PodDeviceStatus.getClassSchema());
        value(subjects, topics.healthTransitions(), HealthTransition.getClassSchema());
        value(subjects, topics.podVerdicts(), TerminatedPod.getClassSchema());
        value(subjects, topics.fleetStats(), FleetStats.getClassSchema());
        value(subjects, topics.deadLetters(), DeadLetter.getClassSchema());
        // The stores DeviceHealthTopology builds with the registry's serdes (the others use StateSerdes). The
        // stores of pod statuses and transitions are not here: they keep the bytes written for their topics (Encoded).
        value(subjects, DeviceHealthTopology.changelog(applicationId, TopologyNames.NODE_ALLOCATIONS_STORE), NodeAllocations.getClassSchema());
        value(subjects, DeviceHealthTopology.changelog(applicationId, TopologyNames.NODE_INVENTORY_STORE), NodeDevices.getClassSchema());
        value(subjects, DeviceHealthTopology.changelog(applicationId, TopologyNames.POD_VERDICT_STORE), TerminatedPod.getClassSchema());
        return subjects;
    }

    /**
     * Registers every subject of {@link #subjects}; registering a schema that is already there returns
     * its id and changes nothing, so this can run on every deployment.
     *
     * @return subject to schema id
     */
    public static Map<String, Integer> registerAll(SchemaRegistryClient registry, Topics topics, String applicationId) {
        Map<String, Integer> ids = new LinkedHashMap<>();
        subjects(topics, applicationId).forEach((subject, schema) -> {
            int id = registry.register(subject, schema);
            ids.put(subject, id);
            LOGGER.info("schema registered subject={} id={}", subject, id);
        });
        return ids;
    }

    private static void value(Map<String, Schema> subjects, String topic, Schema schema) {
        subjects.put(TopicNameStrategy.subjectName(topic, false), schema);
    }
}
