package io.devhealth.cli.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.spi.ILoggingEvent;
import io.devhealth.cli.demo.BatchJob;
import io.devhealth.cli.demo.EmbeddedPipeline;
import io.devhealth.cli.demo.EmbeddedPipeline.Service;
import io.devhealth.processor.PipelineSchemas;
import io.devhealth.processor.ProcessorConfig;
import io.devhealth.runtime.config.ServiceConfig;
import io.devhealth.schema.Topics;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.simulators.dra.DeviceState;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.simulators.kafka.KafkaSecurity;
import io.devhealth.sink.SinkConfig;
import io.devhealth.testkit.kafka.BrokerConfig;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
import io.devhealth.testkit.kafka.SecuredKafkaCluster;
import io.devhealth.testkit.kafka.StrimziResources;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The ACLs that ship (the KafkaUser resources of {@code k8s/components/strimzi}) are enough for the
 * pipeline and no more: a broker that authorizes every request (KRaft's {@code StandardAuthorizer}, no
 * ACL means no access, a super user only for the broker's own PLAINTEXT listener, which the test's
 * admin client and the broker itself use), those users and exactly their ACLs created from the YAML,
 * the KafkaTopic resources created as topics, and the production collector, processor and sink each
 * connecting over SASL_SSL as its own principal, with {@code auto.register.schemas=false} after the
 * schemas were registered ahead.
 *
 * <p>An authorization failure is detected where the broker decides it: its authorizer logs every denied
 * request on {@code kafka.authorizer.logger} ("Principal = User:… is Denied operation = …"). A client
 * that hits one also logs it (Kafka clients name {@code TopicAuthorizationException},
 * {@code GroupAuthorizationException}, … or "Not authorized"); both are checked.
 */
@ExtendWith(KafkaClusterExtension.class)
class ShippedAclsPipelineIT {

    private static final String AUTHORIZER_LOGGER = "kafka.authorizer.logger";
    private static final Path COMPONENT = Path.of("..", "k8s", "components", "strimzi");
    private static final Pattern CLIENT_AUTHORIZATION_ERROR =
            Pattern.compile("AuthorizationException|Not authorized|_AUTHORIZATION_FAILED");

    @RegisterExtension
    static final CapturedLogs LOGS = CapturedLogs.start(List.of(AUTHORIZER_LOGGER));

    private static Path dir;
    private static KafkaSecurity security;
    private static EmbeddedKafkaCluster kafka;
    private static Map<String, String> passwords;

    @BeforeAll
    static void applyShippedUsersAndTopics(
            @BrokerConfig(name = "authorizer.class.name", value = "org.apache.kafka.metadata.authorizer.StandardAuthorizer")
            @BrokerConfig(name = "super.users", value = "User:ANONYMOUS")
            @BrokerConfig(name = "auto.create.topics.enable", value = "false")
            SecuredKafkaCluster secured) throws Exception {
        dir = Files.createTempDirectory("dh-acl");
        security = secured.security();
        kafka = secured.cluster();
        passwords = StrimziResources.readComponent(COMPONENT).applyTo(kafka, security);
    }

    @Test
    void shouldCarryAnUnhealthyDeviceToTheSinkWithEveryServiceUnderItsShippedAcls() throws Exception {
        Map<Service, Map<String, Object>> clients = new EnumMap<>(Service.class);
        clients.put(Service.COLLECTOR, client("devhealth-collector"));
        clients.put(Service.PROCESSOR, client("devhealth-processor"));
        clients.put(Service.SINK, client("devhealth-sink"));
        // As shipped, the services only look schemas up: they are registered ahead, as `devhealth schemas register` does.
        String registry = "mem://acl-" + UUID.randomUUID();
        PipelineSchemas.registerAll(SchemaRegistries.inMemory(registry.substring(SchemaRegistries.MEMORY_SCHEME.length())),
                Topics.withDefaultPrefix(), "devhealth-processor");
        // The shipped names: the KafkaUsers grant exactly these topics, group and application id.
        EmbeddedPipeline.Options options = EmbeddedPipeline.Options.builder(dir).nodes(1).devicesPerNode(1)
                .topicPrefix(Topics.DEFAULT_PREFIX)
                .serviceOptions(Map.of(ProcessorConfig.APPLICATION_ID, "devhealth-processor",
                        ServiceConfig.SCHEMA_REGISTRY_URL, registry,
                        ServiceConfig.AUTO_REGISTER_SCHEMAS, "false",
                        // The sink's optional health-transitions consumer (retry elsewhere) too: its topic and group
                        // are in the sink's KafkaUser whether the feature is on or not.
                        SinkConfig.TAINT_RULES_ENABLED, "true",
                        // Kafka Streams purges what it consumed from its repartition topic (the Delete grant) every
                        // interval, 30 s by default: often enough that this run needs the grant.
                        ServiceConfig.KAFKA_PREFIX + StreamsConfig.REPARTITION_PURGE_INTERVAL_MS_CONFIG, "1000"))
                .build();
        int from = LOGS.events().size();
        try (EmbeddedPipeline pipeline = EmbeddedPipeline.startPerService(options, kafka, clients)) {
            EmbeddedPipeline.SimulatedNode node = pipeline.nodes().get(0);
            BatchJob job = BatchJob.onDevice("ml", "train-acl", node.name(), EmbeddedPipeline.SimulatedNode.device(0));
            job.schedule(pipeline.kubernetes(), node.kubelet());
            node.driver().report(DeviceState.unhealthy(node.pool(), job.device(), "XID 79: GPU has fallen off the bus"));

            await("Unhealthy in pod status").atMost(Duration.ofSeconds(120)).until(() ->
                    job.conditionHealth(pipeline.kubernetes()).orElse(""), "Unhealthy"::equals);
        }

        List<ILoggingEvent> run = LOGS.events().subList(from, LOGS.events().size());
        assertThat(run.stream().filter(e -> e.getLoggerName().equals(AUTHORIZER_LOGGER))
                .map(ILoggingEvent::getFormattedMessage).filter(m -> m.contains(" is Denied ")))
                .as("requests the broker denied to the services").isEmpty();
        assertThat(run.stream().filter(e -> !e.getLoggerName().equals(AUTHORIZER_LOGGER)).map(CapturedLogs::text)
                .filter(t -> CLIENT_AUTHORIZATION_ERROR.matcher(t).find()))
                .as("authorization errors the clients logged").isEmpty();
        LOGS.assertNoneContains(List.copyOf(passwords.values()));
    }

    @Test
    void shouldRefuseTheCollectorWritingOutputsAndTheSinkWritingInputs() {
        Topics topics = Topics.withDefaultPrefix();
        assertRefused("devhealth-collector", topics.podDeviceStatus());
        assertRefused("devhealth-collector", topics.healthTransitions());
        assertRefused("devhealth-sink", topics.nodeEvents());
        assertRefused("devhealth-sink", topics.podDeviceStatus());
    }

    private static void assertRefused(String user, String topic) {
        Map<String, Object> props = new HashMap<>(client(user));
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
        int from = LOGS.events().size();
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer())) {
            assertThatThrownBy(() -> producer.send(new ProducerRecord<>(topic, "node-a", new byte[] {0})).get())
                    .as(user + " writes " + topic).hasRootCauseInstanceOf(TopicAuthorizationException.class);
        }
        assertThat(LOGS.events().subList(from, LOGS.events().size()).stream()
                .filter(e -> e.getLoggerName().equals(AUTHORIZER_LOGGER)).map(ILoggingEvent::getFormattedMessage))
                .as("the broker's decision")
                .anyMatch(m -> m.contains("Principal = User:" + user + " is Denied") && m.contains(topic));
    }

    private static Map<String, Object> client(String user) {
        return security.scramClient(kafka, user, passwords.get(user));
    }
}
