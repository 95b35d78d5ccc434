package io.devhealth.sink;

import static io.devhealth.sink.PodStatusFixtures.device;
import static io.devhealth.sink.PodStatusFixtures.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.simulators.UniqueNames;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.simulators.kube.FaultInjectingKubernetesApi;
import io.devhealth.simulators.kube.PodFixtures;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Several sink replicas in one consumer group share pod-device-status's partitions: while replicas
 * join and leave in the middle of a stream of changes, every pod is written in version order (what the
 * API server shows of a pod never goes back to an older status) and every pod ends with its last status,
 * with every offset committed.
 */
@ExtendWith(KafkaClusterExtension.class)
class SinkReplicasIT {

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final int PARTITIONS = 4;
    private static final int PODS = 24;
    private static final int VERSIONS = 30;
    /** The version each status carries in its device message, and so in the pod's condition message. */
    private static final Pattern VERSION = Pattern.compile("#(\\d+)");

    private final EmbeddedKafkaCluster kafka;
    private final Topics topics = new Topics(UniqueNames.uniqueName("replicas") + ".");
    private final String group = UniqueNames.uniqueName("replicas-group");
    private final String registryUrl = "mem://" + UniqueNames.uniqueName("registry");
    private final List<SinkApp> replicas = new ArrayList<>();
    /** Every version the API server showed of each pod's condition, in the order it showed them. */
    private final Map<String, List<Integer>> shown = new ConcurrentHashMap<>();
    private FaultInjectingKubernetesApi api;
    private KubernetesClient kube;
    private KafkaProducer<String, byte[]> producer;
    private Watch watch;

    SinkReplicasIT(EmbeddedKafkaCluster kafka) {
        this.kafka = kafka;
    }

    @BeforeEach
    void setUp() {
        kafka.createCompactedTopics(PARTITIONS, topics.podDeviceStatus());
        kafka.createTopics(1, topics.deadLetters(), topics.podVerdicts());
        api = FaultInjectingKubernetesApi.start();
        kube = api.newClient(Duration.ofSeconds(30));
        producer = new KafkaProducer<>(new HashMap<>(kafka.clientProperties()), new StringSerializer(), new ByteArraySerializer());
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        if (watch != null) {
            watch.close();
        }
        for (SinkApp replica : replicas) {
            replica.close();
        }
        producer.close();
        api.close();
    }

    @Test
    void shouldWriteEveryPodInVersionOrderAndLeaveNoneBehindWhileReplicasJoinAndLeave() throws Exception {
        List<String> pods = IntStream.range(0, PODS).mapToObj(i -> "job-" + i).toList();
        pods.forEach(pod -> PodFixtures.createRunning(kube, PodFixtures.podWithClaim("ml", pod, "node-a", "main", "gpu", pod + "-gpu", "gpu")));
        watch = kube.pods().inNamespace("ml").watch(new Watcher<>() {
            @Override
            public void eventReceived(Action action, Pod pod) {
                Integer version = shownVersion(pod);
                if (version != null) {
                    List<Integer> versions = shown.computeIfAbsent(pod.getMetadata().getName(), k -> new ArrayList<>());
                    synchronized (versions) {
                        if (versions.isEmpty() || !versions.get(versions.size() - 1).equals(version)) {
                            versions.add(version);
                        }
                    }
                }
            }

            @Override
            public void onClose(WatcherException cause) {
            }
        });
        SinkApp first = startReplica();
        startReplica();

        for (int version = 1; version <= VERSIONS; version++) {
            for (String pod : pods) {
                send(status(version, "ml", pod, "main", pod + "-gpu", HealthStatus.UNHEALTHY,
                        device("gpu-0", HealthStatus.UNHEALTHY, "XID 79 #" + version)));
            }
            if (version == 10) {
                // A replica leaves: its partitions move to the other one, mid-stream.
                first.close();
                replicas.remove(first);
            } else if (version == 20) {
                // A replica joins: partitions move again, away from the one that has them all.
                startReplica();
            }
            Thread.sleep(60);
        }

        await("every pod at its last status").atMost(WAIT).untilAsserted(() -> assertThat(pods).allSatisfy(pod ->
                assertThat(lastShown(pod)).as(pod).isEqualTo(VERSIONS)));
        await("every offset committed").atMost(WAIT).until(this::committedToEnd);
        assertThat(shown).allSatisfy((pod, versions) -> {
            synchronized (versions) {
                assertThat(versions).as("versions %s showed, in order", pod).isSorted();
            }
        });
    }

    private SinkApp startReplica() {
        Map<String, Object> config = new HashMap<>();
        config.put(SinkConfig.BOOTSTRAP_SERVERS, kafka.bootstrapServers());
        config.put(SinkConfig.SCHEMA_REGISTRY_URL, registryUrl);
        config.put(SinkConfig.TOPIC_PREFIX, topics.prefix());
        config.put(SinkConfig.GROUP_ID, group);
        config.put(SinkConfig.KUBERNETES_MASTER, api.url());
        config.put(SinkConfig.WRITE_CONCURRENCY, "3");
        config.put(SinkConfig.API_REQUEST_TIMEOUT_MS, "2000");
        config.put(SinkConfig.RETRY_INITIAL_INTERVAL_MS, "20");
        config.put(SinkConfig.RETRY_MAX_INTERVAL_MS, "300");
        SinkApp replica = new SinkApp(new SinkConfig(config), new SimpleMeterRegistry(), Clock.systemUTC());
        replica.start();
        replicas.add(replica);
        return replica;
    }

    private void send(PodDeviceStatus status) throws Exception {
        String key = status.getPod().getNamespace() + "/" + status.getPod().getName();
        byte[] value = AvroSerde.of(PodDeviceStatus.class, SchemaRegistries.fromUrl(registryUrl)).serializer()
                .serialize(topics.podDeviceStatus(), status);
        producer.send(new ProducerRecord<>(topics.podDeviceStatus(), key, value)).get();
    }

    private Integer lastShown(String pod) {
        List<Integer> versions = shown.get(pod);
        if (versions == null) {
            return null;
        }
        synchronized (versions) {
            return versions.isEmpty() ? null : versions.get(versions.size() - 1);
        }
    }

    private static Integer shownVersion(Pod pod) {
        if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
            return null;
        }
        return pod.getStatus().getConditions().stream().filter(c -> PodStatusWriter.CONDITION_TYPE.equals(c.getType()))
                .map(c -> VERSION.matcher(String.valueOf(c.getMessage()))).filter(Matcher::find)
                .map(m -> Integer.parseInt(m.group(1))).findFirst().orElse(null);
    }

    private boolean committedToEnd() throws Exception {
        Map<TopicPartition, OffsetAndMetadata> committed = kafka.admin().listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata().get();
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            latest.put(new TopicPartition(topics.podDeviceStatus(), p), OffsetSpec.latest());
        }
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = kafka.admin().listOffsets(latest).all().get();
        return ends.entrySet().stream().allMatch(e -> e.getValue().offset() == 0
                || (committed.get(e.getKey()) != null && committed.get(e.getKey()).offset() == e.getValue().offset()));
    }
}
