package io.devhealth.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.schema.Topics;
import io.devhealth.schema.avro.ClaimDeviceStatus;
import io.devhealth.schema.avro.ContainerDeviceStatus;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.DeviceStatus;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.PodDeviceStatus;
import io.devhealth.schema.avro.PodRef;
import io.devhealth.schema.serde.AvroSerde;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.simulators.UniqueNames;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.simulators.kube.PodFixtures;
import io.devhealth.simulators.process.ManagedProcess;
import io.devhealth.simulators.realkube.ControlPlane;
import io.devhealth.simulators.realkube.ShippedManifests;
import io.devhealth.sink.condition.PodStatusWriter;
import io.devhealth.testkit.kafka.CommittedOffsets;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
import io.devhealth.testkit.kube.ShownVersions;
import io.devhealth.testkit.realkube.RealKubernetesExtension;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sink replicas, each the real {@link io.devhealth.sink.SinkApp} in its own JVM ({@link SinkProcessMain}) and all in
 * one consumer group over pod-device-status's {@value #PARTITIONS} partitions, write the statuses of {@value #PODS}
 * pods to a real kube-apiserver (etcd behind it, the sink's shipped CRD, RBAC, admission policies and priority level
 * applied, each replica acting as the sink's ServiceAccount) while a producer sends the pods new versions without
 * pause. One replica at a time is killed with SIGKILL at a random point: it closes nothing, commits nothing and never
 * leaves the group. It is restarted at once, as the kubelet restarts a killed container; once the killed member's
 * session has timed out the partitions move, its own to a replica that must write again what it had not committed,
 * and the other replica's while that one is writing them.
 *
 * <p>Proven, with each status carrying its version in its device message and so in the pod's condition message, and
 * a watch of the pods recording every version the API server showed: per pod the versions shown never go back; every
 * pod ends at the last version sent; the group commits every partition to its end, so nothing is left behind; and the
 * watch saw as many changes as the API server took status writes from the sink, so no write went unseen between two
 * events. A partition's new owner must not write a pod older than its earlier owner did: neither the killed one's
 * writes that landed before it died, nor the patches of a replica whose partitions were revoked while they were on the
 * way. Each poll returns at most {@value #MAX_POLL_RECORDS} records, so that at this small scale a new owner's polls
 * end inside the backlog it takes over, as a fleet-sized backlog's do with Kafka's default of 500.
 *
 * <p>{@value #KILLS_DEFAULT} kills by default ({@code devhealth.fault.sink.kills}); {@code devhealth.fault.seed}
 * replays a run's choices of victims and delays (thread timing still varies).
 */
@Tag("fault")
@Tag("real-kubernetes")
@ExtendWith(KafkaClusterExtension.class)
class SinkKillIT {

    private static final Logger LOGGER = LoggerFactory.getLogger(SinkKillIT.class);
    private static final int KILLS_DEFAULT = 3;
    private static final int KILLS = Integer.getInteger("devhealth.fault.sink.kills", KILLS_DEFAULT);
    private static final int REPLICAS = 2;
    private static final int MAX_POLL_RECORDS = 10;
    private static final int PARTITIONS = 6;
    private static final int PODS = 48;
    /** Pods given new versions every round, chosen at random; the first round gives every pod its first ones. */
    private static final int PODS_PER_ROUND = 12;
    /**
     * Versions each of them is given, one after the other, as a device that flaps gives its pod: a pod's versions then
     * lie side by side in its partition, where a poll may end between them.
     */
    private static final int VERSIONS_PER_ROUND = 2;
    private static final Duration ROUND = Duration.ofMillis(100);
    private static final String NAMESPACE = "sink-kill";
    private static final String NODE = "sink-kill-node";
    private static final String DRIVER = "gpu.example.com";
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** What the sink logs when partitions are revoked from it while their writes are running. */
    private static final String REVOKED_DURING_WRITES = "partitions revoked during writes";
    /** What the sink logs when it is assigned partitions with records after their committed offset. */
    private static final String HANDED_OVER_WITH_BACKLOG = "partitions handed over with records not committed";

    @TempDir
    Path tmp;

    private final EmbeddedKafkaCluster kafka;
    private final Topics topics = new Topics(UniqueNames.uniqueName("sink-kill") + ".");
    private final String registryName = UniqueNames.uniqueName("sink-kill-registry");
    private final String group = UniqueNames.uniqueName("sink-kill-group");
    private final long seed = Long.getLong("devhealth.fault.seed", System.nanoTime());
    private final Random random = new Random(seed);
    private final Path logs = Path.of("target", "sink-kill", group).toAbsolutePath();
    private final List<ManagedProcess> replicas = new ArrayList<>();
    private ControlPlane plane;
    private KubernetesClient admin;

    SinkKillIT(EmbeddedKafkaCluster kafka) {
        this.kafka = kafka;
    }

    @BeforeEach
    void startApiServer() {
        plane = ControlPlane.startApiServer(RealKubernetesExtension.binaries(), tmp.resolve("control-plane"), logs);
        admin = plane.adminClient();
        ShippedManifests.applySink(admin);
        plane.createPodNamespace(NAMESPACE);
        kafka.createCompactedTopics(PARTITIONS, topics.podDeviceStatus());
        kafka.createTopics(1, topics.deadLetters());
        SharedSchemaIds.registerAll(registryName, topics);
    }

    @AfterEach
    void stop() {
        replicas.forEach(ManagedProcess::stop);
        if (plane != null) {
            plane.close();
        }
    }

    @Test
    void shouldWriteEveryPodInVersionOrderAndLeaveNoneBehindWhenReplicasAreKilledMidStream() throws Exception {
        long started = System.nanoTime();
        List<String> pods = IntStream.range(0, PODS).mapToObj(i -> "job-" + i).toList();
        pods.parallelStream().forEach(pod ->
                PodFixtures.createRunning(admin, PodFixtures.podWithClaim(NAMESPACE, pod, NODE, "main", "gpu", claim(pod), "gpu")));
        Map<String, Long> patchesBefore = statusPatchesByCode();
        Path kubeconfig = plane.kubeconfigFor(ShippedManifests.NAMESPACE, ShippedManifests.SINK_SERVICE_ACCOUNT);
        List<Long> killDelaysMs = new ArrayList<>();
        Map<String, Long> lastSent;
        try (ShownVersions shown = ShownVersions.watch(admin, NAMESPACE, PodStatusWriter.CONDITION_TYPE);
             StatusLoad load = new StatusLoad(pods, new Random(seed + 1))) {
            for (int i = 0; i < REPLICAS; i++) {
                replicas.add(replica("replica-" + i, kubeconfig));
            }
            replicas.forEach(ManagedProcess::start);
            Set<String> members = awaitNewMembers(Set.of());
            load.start();
            for (int kill = 1; kill <= KILLS; kill++) {
                // A random point of the stream: the replicas are in the middle of writing what arrived since the last move.
                long delay = 500 + random.nextInt(2_000);
                Thread.sleep(delay);
                killDelaysMs.add(delay);
                ManagedProcess victim = replicas.get(random.nextInt(REPLICAS));
                assertThat(victim.kill()).as("%s killed with SIGKILL", victim.name()).isEqualTo(137);
                // Restarted at once, as the kubelet restarts a killed container. Once the killed member's session has
                // timed out, its partitions move, and so do the other replica's, which it is writing.
                victim.start();
                members = awaitNewMembers(members);
            }
            load.stop();
            lastSent = load.lastVersions();

            await("every pod at the last version sent").atMost(WAIT).pollInterval(Duration.ofMillis(250))
                    .untilAsserted(() -> assertThat(shownNow(shown)).as("each pod's version, as the API server shows it").isEqualTo(lastSent));
            await("every partition committed to its end").atMost(WAIT).pollInterval(Duration.ofMillis(250))
                    .until(() -> CommittedOffsets.atEnd(kafka.admin(), group, topics.podDeviceStatus()));
            Map<String, Long> patches = statusPatchesByCode();
            patchesBefore.forEach((code, count) -> patches.merge(code, -count, Long::sum));
            long confirmed = patches.getOrDefault("200", 0L);
            // A write the API server answered with a 5xx (a timeout under load) may have been stored all the same.
            long unconfirmed = patches.entrySet().stream().filter(p -> p.getKey().startsWith("5")).mapToLong(Map.Entry::getValue).sum();
            // The watch may still be delivering the last writes.
            await("the watch caught up").atMost(WAIT).pollInterval(Duration.ofMillis(250)).until(() -> shown.changes() >= confirmed);
            Map<String, List<Long>> versions = shown.byPod();

            System.out.printf("sink-kill seed=%d kills=%d replicas=%d partitions=%d pods=%d statusesSent=%d versionsShown=%d "
                            + "statusPatchesByCode=%s revokedDuringWrites=%d handedOverWithBacklog=%d killDelaysMs=%s elapsedS=%d%n",
                    seed, KILLS, REPLICAS, PARTITIONS, PODS, load.sent(), shown.changes(), new TreeMap<>(patches),
                    linesInReplicaLogs(REVOKED_DURING_WRITES), linesInReplicaLogs(HANDED_OVER_WITH_BACKLOG), killDelaysMs,
                    TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started));

            assertThat(versions).as("pods whose condition the sink wrote").containsOnlyKeys(pods);
            assertThat(versions).allSatisfy((pod, shownInOrder) ->
                    assertThat(shownInOrder).as("versions of %s in the order the API server showed them", pod).isSorted());
            assertThat(versions.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().get(e.getValue().size() - 1))))
                    .as("each pod's last version shown").isEqualTo(lastSent);
            assertThat(shown.changes()).as("versions the watch saw shown, against the sink's status writes the API server took")
                    .isBetween(confirmed, confirmed + unconfirmed);
        }
    }

    /** The claim made for {@code pod}, as the processor names it in the pod's status. */
    private static String claim(String pod) {
        return pod + "-gpu";
    }

    /** The status the processor would emit for {@code pod}: its one GPU Unhealthy, the version in the device's message. */
    private static PodDeviceStatus status(String pod, long version) {
        Instant now = Instant.now();
        DeviceStatus device = DeviceStatus.newBuilder()
                .setDevice(DeviceRef.newBuilder().setDriver(DRIVER).setPool(NODE).setDevice("gpu-0").build())
                .setResourceId(DRIVER + "/" + NODE + "/gpu-0")
                .setHealth(HealthStatus.UNHEALTHY)
                .setMessage("XID 79 #" + version)
                .setSince(now)
                .build();
        return PodDeviceStatus.newBuilder()
                .setPod(new PodRef(NAMESPACE, pod, null))
                .setNode(NODE)
                .setVersion(version)
                .setUpdatedAt(now)
                .setSummary(HealthStatus.UNHEALTHY)
                .setContainers(List.of(ContainerDeviceStatus.newBuilder().setName("main")
                        .setClaims(List.of(new ClaimDeviceStatus(claim(pod), NAMESPACE, List.of(device)))).build()))
                .build();
    }

    private ManagedProcess replica(String name, Path kubeconfig) {
        List<String> command = ChildJvm.command(SinkProcessMain.class,
                List.of("-D" + SinkProcessMain.OPTION_PREFIX + "kafka.max.poll.records=" + MAX_POLL_RECORDS),
                List.of(kafka.bootstrapServers(), registryName, topics.prefix(), group, kubeconfig.toString()));
        return ManagedProcess.unstarted(name, command, logs.resolve(name + ".log"), tmp.resolve(name));
    }

    /**
     * Until the group is stable with one member per replica, each with partitions, and its members are not
     * {@code before} (a killed member counts until its session times out); fails at once, with the end of its log, if a
     * replica has exited. Returns the members' ids.
     */
    private Set<String> awaitNewMembers(Set<String> before) {
        AtomicReference<Set<String>> members = new AtomicReference<>();
        await("the group stable with " + REPLICAS + " members, not " + before).atMost(WAIT).pollInterval(Duration.ofMillis(200))
                // Before a first member has joined, the group does not exist.
                .ignoreExceptionsMatching(e -> e.getCause() instanceof GroupIdNotFoundException).until(() -> {
                    replicas.forEach(ManagedProcess::requireAlive);
                    ConsumerGroupDescription description = kafka.admin().describeConsumerGroups(List.of(group)).all()
                            .get(10, TimeUnit.SECONDS).get(group);
                    members.set(description.members().stream().map(MemberDescription::consumerId).collect(Collectors.toSet()));
                    return description.groupState() == GroupState.STABLE && members.get().size() == REPLICAS
                            && !members.get().equals(before)
                            && description.members().stream().allMatch(m -> !m.assignment().topicPartitions().isEmpty());
                });
        return members.get();
    }

    /** Each pod's version as the API server shows it now (pods without one left out). */
    private Map<String, Long> shownNow(ShownVersions shown) {
        Map<String, Long> now = new TreeMap<>();
        for (Pod pod : admin.pods().inNamespace(NAMESPACE).list().getItems()) {
            shown.version(pod).ifPresent(version -> now.put(pod.getMetadata().getName(), version));
        }
        return now;
    }

    /** The API server's count of status writes to pods, by response code. */
    private Map<String, Long> statusPatchesByCode() {
        return plane.requestTotals().stream()
                .filter(r -> r.resource().equals("pods") && r.subresource().equals("status") && r.verb().equals("PATCH"))
                .collect(Collectors.toMap(ControlPlane.Requests::code, ControlPlane.Requests::count, Long::sum, TreeMap::new));
    }

    private long linesInReplicaLogs(String text) throws IOException {
        long count = 0;
        for (ManagedProcess replica : replicas) {
            try (Stream<String> lines = Files.lines(replica.log())) {
                count += lines.filter(line -> line.contains(text)).count();
            }
        }
        return count;
    }

    /** Sends versioned statuses of the pods, every {@link #ROUND}, from a thread of its own, until stopped. */
    private final class StatusLoad implements AutoCloseable {
        private final List<String> pods;
        private final Random random;
        private final Map<String, Long> versions = new ConcurrentHashMap<>();
        private final KafkaProducer<String, PodDeviceStatus> producer = new KafkaProducer<>(kafka.clientProperties(),
                new StringSerializer(), AvroSerde.of(PodDeviceStatus.class, SchemaRegistries.inMemory(registryName)).serializer());
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final Thread thread = new Thread(this::run, "sink-kill-load");
        private volatile boolean running = true;
        private long sent;

        StatusLoad(List<String> pods, Random random) {
            this.pods = pods;
            this.random = random;
            // A daemon: a failed run must not leave the fork producing.
            thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        private void run() {
            try {
                List<String> round = new ArrayList<>(pods);
                while (running) {
                    for (String pod : round) {
                        for (int i = 0; i < VERSIONS_PER_ROUND; i++) {
                            long version = versions.merge(pod, 1L, Long::sum);
                            producer.send(new ProducerRecord<>(topics.podDeviceStatus(), NAMESPACE + "/" + pod, status(pod, version)),
                                    (metadata, error) -> {
                                        if (error != null) {
                                            failure.compareAndSet(null, error);
                                        }
                                    });
                            sent++;
                        }
                    }
                    producer.flush();
                    Thread.sleep(ROUND.toMillis());
                    round = new ArrayList<>(pods);
                    Collections.shuffle(round, random);
                    round = round.subList(0, PODS_PER_ROUND);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                failure.set(e);
            }
        }

        /** Stops sending, once every status sent so far is in Kafka; fails if the producer failed. */
        void stop() throws InterruptedException {
            running = false;
            thread.join(WAIT.toMillis());
            assertThat(failure.get()).as("the load's producer failed").isNull();
            LOGGER.info("load stopped statuses={}", sent);
        }

        long sent() {
            return sent;
        }

        /** The last version sent of each pod. */
        Map<String, Long> lastVersions() {
            return new TreeMap<>(versions);
        }

        @Override
        public void close() {
            running = false;
            producer.close(Duration.ofSeconds(10));
        }
    }
}
