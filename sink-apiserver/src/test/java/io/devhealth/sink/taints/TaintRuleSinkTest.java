package io.devhealth.sink.taints;

import static io.devhealth.sink.taints.TaintRuleControllerTest.transition;
import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.sink.ApiCallPolicy;
import io.devhealth.sink.DeadLetterPublisher;
import io.devhealth.sink.SinkMetrics;
import io.devhealth.testkit.time.MutableClock;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceTaintRule;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The health-transitions consumer of retry elsewhere: dead letters, offsets held for pending removals, a restart. */
@EnableKubernetesMockClient(crud = true)
class TaintRuleSinkTest {

    private static final String TOPIC = "devhealth.health-transitions";
    private static final TopicPartition PARTITION = new TopicPartition(TOPIC, 0);
    private static final Duration HOLD = Duration.ofMinutes(10);

    KubernetesMockServer server;
    KubernetesClient client;

    private final MutableClock clock = MutableClock.at("2026-12-02T10:00:00Z");
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final SinkMetrics metrics = new SinkMetrics(registry);
    private final MockProducer<String, DeadLetter> dlq = new MockProducer<>(true, null, new StringSerializer(), (t, v) -> new byte[0]);

    @BeforeEach
    void setUp() {
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName("node-a").endMetadata().build()).create();
    }

    private static byte[] encode(HealthTransition transition) {
        try {
            ByteBuffer buffer = HealthTransition.getEncoder().encode(transition);
            byte[] bytes = new byte[buffer.remaining()];
            buffer.get(bytes);
            return bytes;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static HealthTransition decode(byte[] bytes) {
        try {
            return HealthTransition.getDecoder().decode(bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A sink reading {@link #PARTITION} from {@code from}, as after a start whose group had committed {@code from}. */
    private TaintRuleSink sink(MockConsumer<String, byte[]> consumer, long from) {
        consumer.assign(List.of(PARTITION));
        consumer.updateBeginningOffsets(Map.of(PARTITION, from));
        TaintRuleSettings settings = new TaintRuleSettings(true, false, "devhealth-sink-taints", HOLD, 2, 1.0, Duration.ofMinutes(5));
        TaintRuleController controller = new TaintRuleController(new KubernetesTaintRules(client,
                new ApiCallPolicy(ApiCallPolicy.Settings.singleAttempt(1_000), metrics), clock), settings, metrics, Duration.ofSeconds(30));
        return new TaintRuleSink(consumer, TOPIC, TaintRuleSinkTest::decode, controller, new DeadLetterPublisher(dlq, "devhealth.dlq", clock),
                metrics, clock, Duration.ofSeconds(30));
    }

    private static ConsumerRecord<String, byte[]> record(long offset, byte[] value) {
        return new ConsumerRecord<>(TOPIC, 0, offset, "node-a/gpu.example.com/node-a/gpu-1", value);
    }

    private static ConsumerRecord<String, byte[]> record(long offset, HealthStatus to) {
        return record(offset, encode(transition("node-a", "gpu-1", to, SourceKind.DRA)));
    }

    private List<DeviceTaintRule> rules() {
        return client.resources(DeviceTaintRule.class).list().getItems();
    }

    private static long committed(MockConsumer<String, byte[]> consumer) {
        OffsetAndMetadata offset = consumer.committed(Set.of(PARTITION)).get(PARTITION);
        return offset == null ? -1 : offset.offset();
    }

    @Test
    void shouldSendAPoisonRecordToTheDeadLetterTopicAndGoOn() {
        MockConsumer<String, byte[]> consumer = new MockConsumer<>("earliest");
        TaintRuleSink sink = sink(consumer, 0);
        consumer.addRecord(record(0, "not avro".getBytes(StandardCharsets.UTF_8)));
        consumer.addRecord(record(1, HealthStatus.UNHEALTHY));

        sink.pollOnce();

        assertThat(dlq.history()).singleElement().satisfies(sent -> {
            assertThat(sent.topic()).isEqualTo("devhealth.dlq");
            assertThat(sent.value().getSourceTopic()).isEqualTo(TOPIC);
            assertThat(sent.value().getSourceOffset()).isZero();
            assertThat(sent.value().getReason()).startsWith("undecodable health-transition");
        });
        assertThat(registry.get("devhealth.sink.dead.letters").tag("reason", "undecodable").counter().count()).isEqualTo(1);
        assertThat(rules()).as("the record after the poison one is applied").hasSize(1);
        assertThat(committed(consumer)).isEqualTo(2);
    }

    @Test
    void shouldHoldTheOffsetOfAPendingRemovalSoThatARestartedSinkStillRemovesTheRule() {
        MockConsumer<String, byte[]> consumer = new MockConsumer<>("earliest");
        TaintRuleSink sink = sink(consumer, 0);
        consumer.addRecord(record(0, HealthStatus.UNHEALTHY));
        consumer.addRecord(record(1, HealthStatus.HEALTHY));
        sink.pollOnce();
        assertThat(rules()).as("healthy within the hold").hasSize(1);
        assertThat(committed(consumer)).as("not past the Healthy transition whose rule is still there").isEqualTo(1);

        // The sink stops here; a new one reads on from the committed offset and rebuilds its state from the rule.
        clock.advance(Duration.ofMinutes(4));
        MockConsumer<String, byte[]> restarted = new MockConsumer<>("earliest");
        TaintRuleSink after = sink(restarted, committed(consumer));
        restarted.addRecord(record(1, HealthStatus.HEALTHY));
        after.pollOnce();
        assertThat(rules()).as("the hold counts from the rule's creation, not from the restart").hasSize(1);

        clock.advance(HOLD.minus(Duration.ofMinutes(4)));
        after.pollOnce();
        assertThat(rules()).isEmpty();
        assertThat(committed(restarted)).isEqualTo(2);
    }

    @Test
    void shouldWaitWithoutDecidingWhileItsRulesCannotBeListed() {
        server.expect().get().withPath("/apis/resource.k8s.io/v1beta2/devicetaintrules?labelSelector=app.kubernetes.io%2Fmanaged-by%3Ddevhealth-sink")
                .andReturn(404, "the server could not find the requested resource").once();
        MockConsumer<String, byte[]> consumer = new MockConsumer<>("earliest");
        TaintRuleSink sink = sink(consumer, 0);
        consumer.addRecord(record(0, HealthStatus.UNHEALTHY));

        sink.pollOnce();
        assertThat(rules()).as("nothing decided without the existing rules").isEmpty();
        assertThat(committed(consumer)).isEqualTo(-1);
        assertThat(consumer.paused()).containsExactly(PARTITION);

        clock.advance(Duration.ofSeconds(30));
        consumer.resume(consumer.paused());
        consumer.addRecord(record(0, HealthStatus.UNHEALTHY));
        sink.pollOnce();
        assertThat(rules()).hasSize(1);
        assertThat(committed(consumer)).isEqualTo(1);
    }
}
