package io.devhealth.sink;

import static io.devhealth.sink.PodStatusFixtures.device;
import static io.devhealth.sink.PodStatusFixtures.status;
import static io.devhealth.testkit.assertions.PodStatusAssert.assertThatPod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.DeadLetter;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.simulators.UniqueNames;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.simulators.kube.FaultInjectingKubernetesApi;
import io.devhealth.simulators.kube.FaultInjectingKubernetesApi.Fault;
import io.devhealth.simulators.kube.PodFixtures;
import io.devhealth.sink.condition.PodStatusWriter;
import io.devhealth.sink.postmortem.DevicePostMortem;
import io.devhealth.testkit.kafka.CommittedOffsets;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
import io.devhealth.testkit.kafka.TopicReader;
import io.devhealth.testkit.kube.ShownVersions;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.ResourceStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The whole sink against a real Kafka broker and the mock API server with injected faults: records in,
 * pod status out, offsets committed only behind finished writes.
 */
@ExtendWith(KafkaClusterExtension.class)
class PodStatusSinkIT {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int PARTITIONS = 2;

    private final EmbeddedKafkaCluster kafka;
    private final Topics topics = new Topics(UniqueNames.uniqueName("sink") + ".");
    private final String group = UniqueNames.uniqueName("sink-group");
    private final String registryUrl = "mem://" + UniqueNames.uniqueName("registry");
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private FaultInjectingKubernetesApi api;
    private KubernetesClient kube;
    private KafkaProducer<String, byte[]> producer;
    private SinkApp sink;

    PodStatusSinkIT(EmbeddedKafkaCluster kafka) {
        this.kafka = kafka;
    }

    @BeforeEach
    void setUp() {
        kafka.createCompactedTopics(PARTITIONS, topics.podDeviceStatus());
        kafka.createTopics(1, topics.deadLetters());
        api = FaultInjectingKubernetesApi.start();
        kube = api.newClient(Duration.ofSeconds(30));
        Map<String, Object> props = new HashMap<>(kafka.clientProperties());
        producer = new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer());
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        if (sink != null) {
            sink.close();
        }
        producer.close();
        api.close();
    }

    private void startSink(Duration terminationWindow) {
        sink = newSink(terminationWindow, meters);
        sink.start();
    }

    /** A sink of the test's consumer group, not started. */
    private SinkApp newSink(Duration terminationWindow, SimpleMeterRegistry registry) {
        Map<String, Object> config = new HashMap<>();
        config.put(SinkConfig.BOOTSTRAP_SERVERS, kafka.bootstrapServers());
        config.put(SinkConfig.SCHEMA_REGISTRY_URL, registryUrl);
        config.put(SinkConfig.TOPIC_PREFIX, topics.prefix());
        config.put(SinkConfig.GROUP_ID, group);
        config.put(SinkConfig.KUBERNETES_MASTER, api.url());
        config.put(SinkConfig.API_REQUEST_TIMEOUT_MS, "1000");
        config.put(SinkConfig.RETRY_INITIAL_INTERVAL_MS, "20");
        config.put(SinkConfig.RETRY_MAX_INTERVAL_MS, "300");
        config.put(SinkConfig.TERMINATION_WINDOW_MS, String.valueOf(terminationWindow.toMillis()));
        return new SinkApp(new SinkConfig(config), registry, Clock.systemUTC());
    }

    private byte[] send(PodDeviceStatus status) {
        String key = status.getPod().getNamespace() + "/" + status.getPod().getName();
        byte[] value = AvroSerde.of(PodDeviceStatus.class, SchemaRegistries.fromUrl(registryUrl)).serializer()
                .serialize(topics.podDeviceStatus(), status);
        sendRaw(key, value);
        return value;
    }

    private void sendRaw(String key, byte[] value) {
        try {
            producer.send(new ProducerRecord<>(topics.podDeviceStatus(), key, value)).get();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private Pod createPod(String name) {
        return PodFixtures.createRunning(kube, PodFixtures.podWithClaim("ml", name, "node-a", "main", "gpu", name + "-gpu", "gpu"));
    }

    private static PodDeviceStatus gpu(long version, String pod, HealthStatus health, String message) {
        return status(version, "ml", pod, "main", pod + "-gpu", health, device("gpu-0", health, message));
    }

    private Pod pod(String name) {
        return kube.pods().inNamespace("ml").withName(name).get();
    }

    /** devhealth's condition on the pod as {@code Healthy|null} or {@code Unhealthy|<the device's message>}; null without one. */
    private static String health(Pod pod) {
        return pod.getStatus().getConditions().stream().filter(c -> PodStatusWriter.CONDITION_TYPE.equals(c.getType())).findFirst()
                .map(c -> "True".equals(c.getStatus()) ? "Healthy|null"
                        : "Unhealthy|" + c.getMessage().substring(c.getMessage().lastIndexOf(": ") + 2))
                .orElse(null);
    }

    /** The first device of the pod's post-mortem record as {@code health|message}; null without a record. */
    private String recorded(String pod) {
        DevicePostMortem record = kube.resources(DevicePostMortem.class).inNamespace("ml").withName(pod).get();
        if (record == null) {
            return null;
        }
        DevicePostMortem.DeviceRecord device = record.getSpec().containers().get(0).resources().get(0).devices().get(0);
        return device.health() + "|" + device.message();
    }

    private boolean committedToEnd() {
        return CommittedOffsets.atEnd(kafka.admin(), group, topics.podDeviceStatus());
    }

    private long committed() throws Exception {
        return kafka.admin().listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().values().stream()
                .mapToLong(OffsetAndMetadata::offset).sum();
    }

    private List<DeadLetter> deadLetters(int atLeast) {
        try (TopicReader<String, DeadLetter> reader = TopicReader.of(kafka, topics.deadLetters()).readUncommitted()
                .deserializers(new StringDeserializer(), AvroSerde.of(DeadLetter.class, SchemaRegistries.fromUrl(registryUrl)).deserializer())
                .open()) {
            return reader.readAtLeast(atLeast, WAIT).stream().map(ConsumerRecord::value).toList();
        }
    }

    private static ContainerStatus withoutDeviceHealth(ContainerStatus status) {
        return new ContainerStatusBuilder(status).withAllocatedResourcesStatus((List<ResourceStatus>) null).build();
    }

    /**
     * Replicas of the sink in one consumer group share the partitions: while one leaves and another
     * joins in the middle of a stream of changes, what the API server shows of a pod never goes back to
     * an older status, every pod ends with its last one, and every offset is committed. Each status
     * carries its version in its device message, and so in the pod's condition message.
     */
    @Test
    void shouldWriteEveryPodInVersionOrderAndLeaveNoneBehindWhileReplicasJoinAndLeave() throws Exception {
        List<String> pods = IntStream.range(0, 24).mapToObj(i -> "job-" + i).toList();
        pods.forEach(this::createPod);
        List<SinkApp> replicas = new ArrayList<>();
        try (ShownVersions shown = ShownVersions.watch(kube, "ml", PodStatusWriter.CONDITION_TYPE)) {
            replicas.add(newSink(Duration.ofMinutes(2), new SimpleMeterRegistry()));
            replicas.add(newSink(Duration.ofMinutes(2), new SimpleMeterRegistry()));
            replicas.forEach(SinkApp::start);
            int last = 30;
            for (int version = 1; version <= last; version++) {
                for (String pod : pods) {
                    send(gpu(version, pod, HealthStatus.UNHEALTHY, "XID 79 #" + version));
                }
                if (version == 10) {
                    // A replica leaves: its partitions move to the other one, mid-stream.
                    replicas.remove(0).close();
                } else if (version == 20) {
                    // A replica joins: partitions move again, away from the one that has them all.
                    SinkApp joining = newSink(Duration.ofMinutes(2), new SimpleMeterRegistry());
                    replicas.add(joining);
                    joining.start();
                }
                Thread.sleep(60);
            }

            await("every pod at its last status").atMost(WAIT).untilAsserted(() -> assertThat(pods).allSatisfy(pod ->
                    assertThat(health(pod(pod))).as(pod).isEqualTo("Unhealthy|XID 79 #" + last)));
            await("every offset committed").atMost(WAIT).until(this::committedToEnd);
            assertThat(shown.byPod()).allSatisfy((pod, versions) ->
                    assertThat(versions).as("versions %s showed, in order", pod).isSorted());
        } finally {
            for (SinkApp replica : replicas) {
                replica.close();
            }
        }
    }

    @Test
    void shouldMeasureEachWriteFromTheChangeAtTheNodeByTheRecordsTimestamp() throws Exception {
        createPod("job-latency");
        startSink(Duration.ofMinutes(2));
        // The processor stamps a status with the node's time of the change; this one happened 3 s ago.
        long changedAt = System.currentTimeMillis() - 3_000;
        byte[] value = AvroSerde.of(PodDeviceStatus.class, SchemaRegistries.fromUrl(registryUrl)).serializer()
                .serialize(topics.podDeviceStatus(), gpu(1, "job-latency", HealthStatus.UNHEALTHY, "XID 79"));
        producer.send(new ProducerRecord<>(topics.podDeviceStatus(), null, changedAt, "ml/job-latency", value)).get();

        await("written").atMost(WAIT).until(() -> "Unhealthy|XID 79".equals(health(pod("job-latency"))));
        Timer latency = meters.get("devhealth.sink.end.to.end.latency").timer();
        await("measured").atMost(WAIT).until(() -> latency.count() == 1);
        assertThat(latency.max(TimeUnit.SECONDS)).isGreaterThanOrEqualTo(3.0).isLessThan(WAIT.toSeconds());
    }

    @Test
    void shouldConvergeToTheLatestStatusOfEveryPodUnderTwentyPercentInjectedFailures() throws Exception {
        List<String> pods = List.of("job-0", "job-1", "job-2", "job-3", "job-4", "job-5");
        Map<String, ContainerStatus> kubeletView = new HashMap<>();
        pods.forEach(p -> kubeletView.put(p, createPod(p).getStatus().getContainerStatuses().get(0)));
        // One in five reads and patches of the pods fails; a few patches also conflict first.
        api.injectRandomly(0.2, 42, r -> r.path().contains("/namespaces/ml/pods/"),
                Fault.status(500), Fault.status(503), Fault.status(429), Fault.slow(Duration.ofMillis(1500)));
        api.injectNext(3, FaultInjectingKubernetesApi.method("PATCH"), Fault.status(409));
        startSink(Duration.ofMinutes(2));

        // Four rounds of changes; the last one decides: even pods recover, odd pods stay broken.
        for (int version = 1; version <= 4; version++) {
            for (int i = 0; i < pods.size(); i++) {
                boolean healthy = version == 1 || (version == 4 && i % 2 == 0);
                send(gpu(version, pods.get(i), healthy ? HealthStatus.HEALTHY : HealthStatus.UNHEALTHY,
                        healthy ? null : "XID " + (version == 4 ? 48 : 79)));
            }
            Thread.sleep(150);
        }

        // The test's own reads meet the injected faults too: ignore those and read again.
        await("every pod at its latest status").atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            for (int i = 0; i < pods.size(); i++) {
                assertThat(health(pod(pods.get(i)))).as(pods.get(i)).isEqualTo(i % 2 == 0 ? "Healthy|null" : "Unhealthy|XID 48");
                assertThatPod(pod(pods.get(i))).hasCondition(PodStatusWriter.CONDITION_TYPE, i % 2 == 0 ? "True" : "False");
            }
        });
        await("offsets committed").atMost(WAIT).until(this::committedToEnd);
        assertThat(api.injectedCount()).isGreaterThan(5);
        api.stopInjecting();
        for (String p : pods) {
            // ready, restartCount, state, imageID, containerID, started…: exactly as the kubelet left them.
            assertThat(withoutDeviceHealth(pod(p).getStatus().getContainerStatuses().get(0))).isEqualTo(withoutDeviceHealth(kubeletView.get(p)));
        }
        assertThat(meters.find("devhealth.sink.dead.letters").counters()).extracting(c -> c.count()).containsOnly(0.0);
    }

    @Test
    void shouldPauseWhileTheApiServerIsUnreachableAndResumeWithoutLossOrReordering() throws Exception {
        createPod("job-0");
        startSink(Duration.ofMinutes(2));
        send(gpu(1, "job-0", HealthStatus.HEALTHY, null));
        await("first status").atMost(WAIT).until(() -> "Healthy|null".equals(health(pod("job-0"))));
        await("first commit").atMost(WAIT).until(() -> committed() == 1);

        api.goDown();
        send(gpu(2, "job-0", HealthStatus.UNHEALTHY, "XID 79"));
        await("paused").atMost(WAIT).until(() -> meters.get("devhealth.sink.api.unreachable").gauge().value() == 1.0);
        send(gpu(3, "job-0", HealthStatus.UNHEALTHY, "XID 94"));
        Thread.sleep(1_000);
        assertThat(committed()).as("nothing committed while the writes wait").isEqualTo(1);

        api.comeBack();
        await("latest status after the outage").atMost(WAIT).until(() -> "Unhealthy|XID 94".equals(health(pod("job-0"))));
        await("all committed").atMost(WAIT).until(() -> committed() == 3);
        assertThat(meters.get("devhealth.sink.api.unreachable").gauge().value()).isZero();
    }

    @Test
    void shouldDeadLetterRejectedAndUndecodableRecordsAndKeepGoing() throws Exception {
        createPod("job-0");
        api.injectNext(1, FaultInjectingKubernetesApi.method("PATCH"), Fault.status(422));
        startSink(Duration.ofMinutes(2));

        byte[] rejected = send(gpu(1, "job-0", HealthStatus.UNHEALTHY, "XID 79"));
        List<DeadLetter> first = deadLetters(1);
        sendRaw("ml/job-0", "not avro".getBytes(StandardCharsets.UTF_8));
        send(gpu(2, "job-0", HealthStatus.UNHEALTHY, "XID 94"));

        await("later status written").atMost(WAIT).until(() -> "Unhealthy|XID 94".equals(health(pod("job-0"))));
        await("all committed").atMost(WAIT).until(this::committedToEnd);
        List<DeadLetter> letters = deadLetters(2);
        assertThat(first).singleElement().satisfies(letter -> {
            assertThat(letter.getStage()).isEqualTo("sink");
            assertThat(letter.getReason()).contains("code=422").contains("injected fault 422");
            assertThat(letter.getValue()).isEqualTo(ByteBuffer.wrap(rejected));
            assertThat(letter.getSourceTopic()).isEqualTo(topics.podDeviceStatus());
        });
        assertThat(letters).anySatisfy(letter -> assertThat(letter.getReason()).startsWith("undecodable"));
    }

    @Test
    void shouldFinishAndFreezeAPodThatTerminatesWithoutANewStatus() throws Exception {
        createPod("job-0");
        startSink(Duration.ofSeconds(3));
        Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        send(status(1, "ml", "job-0", "main", "job-0-gpu", HealthStatus.UNHEALTHY,
                device("gpu-0", HealthStatus.UNHEALTHY, "XID 79", now.minusSeconds(5))));
        await("condition on the live pod").atMost(WAIT).untilAsserted(() ->
                assertThatPod(pod("job-0")).hasCondition(PodStatusWriter.CONDITION_TYPE, "False"));
        assertThat(pod("job-0").getStatus().getContainerStatuses().get(0).getAllocatedResourcesStatus())
                .as("live containers are the kubelet's").isNullOrEmpty();
        assertThat(recorded("job-0")).as("no post-mortem of a live pod").isNull();

        PodFixtures.markTerminated(kube, "ml", "job-0", 1, now);

        await("post-mortem recorded on termination").atMost(WAIT).until(() -> "Unhealthy|XID 79".equals(recorded("job-0")));
        await("frozen after the window").atMost(WAIT).untilAsserted(() ->
                assertThatPod(pod("job-0")).hasCondition(PodStatusWriter.FINAL_CONDITION_TYPE, "True"));
        String resourceVersion = pod("job-0").getMetadata().getResourceVersion();
        assertThat(kube.resources(DevicePostMortem.class).inNamespace("ml").withName("job-0").get().getSpec().isFrozen()).isTrue();

        send(status(2, "ml", "job-0", "main", "job-0-gpu", HealthStatus.HEALTHY,
                device("gpu-0", HealthStatus.HEALTHY, null, Instant.now())));
        await("later status consumed").atMost(WAIT).until(this::committedToEnd);
        assertThat(pod("job-0").getMetadata().getResourceVersion()).isEqualTo(resourceVersion);
        assertThat(recorded("job-0")).isEqualTo("Unhealthy|XID 79");
        Set<String> conditions = pod("job-0").getStatus().getConditions().stream().map(c -> c.getType()).collect(Collectors.toSet());
        assertThat(conditions).contains(PodStatusWriter.CONDITION_TYPE, PodStatusWriter.FINAL_CONDITION_TYPE);
    }

    /**
     * A node's tombstone for a pod (it released the pod: the processor's pod claims read it) is not a
     * deletion: the sink keeps the pod's last status, so the record of the terminated pod is still made
     * from it and frozen. Before, the tombstone made the sink forget the pod, and its maintenance then
     * failed on the missing status again and again, holding up every pod's writes.
     */
    @Test
    void shouldRecordAndFreezeATerminatedPodWhoseNodeReleasedIt() throws Exception {
        createPod("job-0");
        createPod("job-1");
        startSink(Duration.ofSeconds(3));
        Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        send(status(1, "ml", "job-0", "main", "job-0-gpu", HealthStatus.UNHEALTHY,
                device("gpu-0", HealthStatus.UNHEALTHY, "XID 79", now.minusSeconds(5))));
        await("condition on the live pod").atMost(WAIT).untilAsserted(() ->
                assertThatPod(pod("job-0")).hasCondition(PodStatusWriter.CONDITION_TYPE, "False"));
        sendRaw("ml/job-0", null);
        send(gpu(1, "job-1", HealthStatus.HEALTHY, null));
        await("a later pod's status written: the tombstone was read before it").atMost(WAIT).untilAsserted(() ->
                assertThatPod(pod("job-1")).hasCondition(PodStatusWriter.CONDITION_TYPE, "True"));

        PodFixtures.markTerminated(kube, "ml", "job-0", 1, now);

        await("post-mortem recorded on termination, from the last status").atMost(WAIT)
                .until(() -> "Unhealthy|XID 79".equals(recorded("job-0")));
        await("frozen after the window").atMost(WAIT).untilAsserted(() ->
                assertThatPod(pod("job-0")).hasCondition(PodStatusWriter.FINAL_CONDITION_TYPE, "True"));
        assertThat(meters.find("devhealth.sink.skipped").tag("reason", "released").counter()).isNotNull()
                .satisfies(counter -> assertThat(counter.count()).isEqualTo(1.0));
    }
}
