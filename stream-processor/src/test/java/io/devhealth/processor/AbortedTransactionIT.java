package io.devhealth.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.schema.avro.ClaimAllocation;
import io.devhealth.schema.avro.ClaimDevice;
import io.devhealth.schema.avro.ContainerAllocation;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.NodeAllocations;
import io.devhealth.schema.avro.PodAllocation;
import io.devhealth.schema.avro.PodRef;
import io.devhealth.schema.avro.ReportKind;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.avro.TerminatedPod;
import io.devhealth.schema.avro.Verdict;
import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.testkit.kafka.KafkaClusterExtension;
import io.devhealth.testkit.kafka.TopicReader;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Exactly-once when Kafka Streams aborts a stream thread's transaction for one task while a rebalance is
 * in progress. Under exactly-once v2 all tasks of a stream thread write in one transaction. When one task
 * is found corrupted, Kafka Streams commits the others first and then closes the corrupted one dirty,
 * which aborts the transaction; but while a rebalance is in progress that commit is skipped, so the abort
 * takes the other tasks' output since their last commit with it, and those tasks go on from where they
 * were: their positions are committed later, their output never is.
 *
 * <p>The broker, Kafka Streams and the processor are real. The rebalance is held open by a member whose
 * stream thread stops polling (a stuck instance: the group waits for it to rejoin) while a third instance
 * joins; the processor goes on processing meanwhile, as the cooperative protocol lets it. The corruption is
 * Kafka Streams' own answer to a send that expired: a retriable error, which the default production
 * exception handler retries by reinitializing the task ({@code RecordCollectorImpl.recordSendError}). Only
 * the expiry is injected, at the producer: the verdicts' changelog record never reaches the broker and its
 * callback gets the error the producer gives a batch older than {@code delivery.timeout.ms} (a single broker
 * cannot refuse one partition's writes with a retriable error). Without {@link
 * io.devhealth.processor.internals.AbortFencingProducer} node-b's eight transitions are never committed
 * while its reports are (0 of 8, 2026-12-03).
 */
@ExtendWith(KafkaClusterExtension.class)
class AbortedTransactionIT {

    private static final String DRIVER = "gpu.example.com";
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final int DEVICES = 8;

    private final Instant t0 = Instant.now().truncatedTo(ChronoUnit.MILLIS).minus(Duration.ofMinutes(10));
    private ProcessorRun run;
    private long sequence;

    @BeforeEach
    void createTopics(EmbeddedKafkaCluster cluster) {
        run = new ProcessorRun(cluster, "aborted", 1);
    }

    @AfterEach
    void stop() {
        run.close();
    }

    /** With either setting of Kafka Streams' transactional state stores: the fence does not depend on them. */
    @ParameterizedTest(name = "transactional state stores {0}")
    @ValueSource(booleans = {true, false})
    void shouldNotLoseATasksOutputWhenAnotherTaskOfItsThreadIsFoundCorruptedDuringARebalance(boolean transactionalStores, @TempDir Path tmp)
            throws Exception {
        Map<String, String> settings = settings(transactionalStores);
        FaultyClients processorClients = new FaultyClients();
        StreamProcessorApp processor = run.start(tmp.resolve("processor"), settings, processorClients);
        sendNode("node-a");
        await("node-a's transitions committed").atMost(WAIT).until(() -> committedTransitions("node-a") == DEVICES);
        // A verdict, so that the verdicts' store has a changelog to catch up on: its task stays with the processor.
        run.sendVerdict(verdict("setup"));
        run.awaitCommitted(run.topics.podVerdicts(), WAIT);

        FaultyClients stuckClients = new FaultyClients();
        StreamProcessorApp stuck = run.start(tmp.resolve("stuck"), settings, stuckClients);
        await("the group stable with both instances").atMost(WAIT)
                .until(() -> ProcessorRun.running(processor) && ProcessorRun.running(stuck) && groupState() == GroupState.STABLE);
        // Stores with a changelog stay where they are caught up (acceptable.recovery.lag=0): the processor keeps them.
        assertThat(ProcessorRun.activeTasks(processor).stream().flatMap(task -> task.topicPartitions().stream()).map(TopicPartition::topic))
                .as("tasks of the processor").contains(run.topics.nodeEvents(), run.topics.podVerdicts());

        // The stuck instance stops polling; a new one joins: the group waits for the stuck one to rejoin.
        stuckClients.stalled.set(true);
        Thread.sleep(1_000);
        run.start(tmp.resolve("joining"), settings);
        await("a rebalance in progress").atMost(WAIT).until(() -> groupState() == GroupState.PREPARING_REBALANCE);
        Thread.sleep(5_000); // heartbeats of 500 ms: the processor has rejoined, and goes on processing meanwhile

        // node-b's first reports: eight transitions in the thread's open transaction (no commit during a rebalance).
        sendNode("node-b");
        try (TopicReader<String, HealthTransition> uncommitted = TopicReader.of(run.kafka, run.topics.healthTransitions())
                .deserializers(new StringDeserializer(), run.serdes.healthTransitions().deserializer()).readUncommitted().open()) {
            uncommitted.readUntil(records -> records.stream().filter(r -> r.value().getNode().equals("node-b")).count() == DEVICES, WAIT);
        }
        Thread.sleep(1_000); // ten commit intervals
        assertThat(committedTransitions("node-b")).as("node-b's transitions not committed while the rebalance is open").isZero();

        // A send of the verdicts' task expires (as a batch does when its partition's leader cannot take it within
        // delivery.timeout.ms): Kafka Streams finds the task corrupted at its next send, and aborts the thread's transaction.
        // (A task that reads what the node task wrote cannot run meanwhile: its input ends where the open transaction begins.)
        processorClients.expiring = DeviceHealthTopology.changelog(run.applicationId, DeviceHealthTopology.POD_VERDICT_STORE);
        run.sendVerdict(verdict("fault-1"));
        await("the send expired").atMost(WAIT).until(() -> processorClients.expired.get() > 0);
        run.sendVerdict(verdict("fault-2"));
        await("the transaction aborted").atMost(WAIT).until(() -> processorClients.aborted.get() > 0);
        processorClients.expiring = null;

        stuckClients.stalled.set(false);
        await("the rebalance over").atMost(WAIT).until(() -> groupState() == GroupState.STABLE);
        run.awaitCommitted(run.topics.nodeEvents(), WAIT);
        // The reports' offsets and their transitions commit in one transaction, but its markers reach the partitions
        // one after the other: the group's offsets can show before the transitions do. Without the fence they never do.
        await("node-b's transitions committed").atMost(Duration.ofSeconds(30)).until(() -> committedTransitions("node-b") >= DEVICES);
        assertThat(committedTransitions("node-b")).as("node-b's transitions, each once").isEqualTo(DEVICES);
        assertThat(processor.meters().get(StreamProcessorApp.FENCED_TRANSACTIONS_METER).functionCounter().count())
                .as("fenced transactions, as an operator sees them").isGreaterThanOrEqualTo(1.0);
    }

    private static Map<String, String> settings(boolean transactionalStores) {
        return Map.of(
                ProcessorConfig.TRANSACTIONAL_STATE_STORES, Boolean.toString(transactionalStores),
                "kafka." + StreamsConfig.ACCEPTABLE_RECOVERY_LAG_CONFIG, "0",
                "kafka." + ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500",
                // Longer than the rebalance is held open: the broker must not abort the transaction on its own.
                "kafka." + StreamsConfig.producerPrefix(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG), "120000");
    }

    /** A node with {@value #DEVICES} GPUs, one pod each, and each GPU's first report: a transition each. */
    private void sendNode(String node) throws Exception {
        List<PodAllocation> pods = new ArrayList<>();
        for (int d = 0; d < DEVICES; d++) {
            String pod = node + "-job-" + d;
            pods.add(new PodAllocation("ml", pod, List.of(ContainerAllocation.newBuilder().setName("main")
                    .setClaims(List.of(new ClaimAllocation(pod + "-gpu", "ml", List.of(ClaimDevice.newBuilder()
                            .setDriver(DRIVER).setPool(node).setDevice("gpu-" + d).build())))).build())));
        }
        run.sendAllocations(NodeAllocations.newBuilder().setNode(node).setObservedAt(t0).setCollectorEpoch(1).setSequence(++sequence)
                .setPods(pods).build());
        for (int d = 0; d < DEVICES; d++) {
            run.sendReport(node, DeviceHealthReport.newBuilder().setNode(node).setSource(SourceKind.DRA).setSourceName(DRIVER)
                    .setDevice(DeviceRef.newBuilder().setDriver(DRIVER).setPool(node).setDevice("gpu-" + d).build())
                    .setHealth(HealthStatus.HEALTHY).setKind(ReportKind.CHANGE).setTimeoutSeconds(3_600L)
                    .setObservedAt(t0.plusSeconds(1 + d)).setCollectorEpoch(1).setSequence(++sequence).build());
        }
    }

    private long committedTransitions(String node) {
        try (TopicReader<String, HealthTransition> reader = TopicReader.of(run.kafka, run.topics.healthTransitions())
                .deserializers(new StringDeserializer(), run.serdes.healthTransitions().deserializer()).open()) {
            return reader.readToEnd(WAIT).stream().filter(r -> r.value().getNode().equals(node)).count();
        }
    }

    /** A terminated pod's verdict, as the sink publishes it. */
    private TerminatedPod verdict(String name) {
        return TerminatedPod.newBuilder().setId("uid-" + name).setPod(new PodRef("ml", name, "uid-" + name)).setNode("node-a")
                .setPhase("Failed").setVerdict(Verdict.NO_DEVICE_FAILURE).setRecordedAt(t0).build();
    }

    private GroupState groupState() throws Exception {
        return run.kafka.admin().describeConsumerGroups(List.of(run.applicationId)).describedGroups().get(run.applicationId).get()
                .groupState();
    }

    /**
     * The processor's clients with two faults a test can switch on: a main consumer whose poll waits while
     * {@link #stalled} (a stuck stream thread), and a producer whose sends to topic {@link #expiring} never reach
     * the broker and fail, a moment later, with the error the producer gives a batch that expired.
     */
    static final class FaultyClients extends ProcessorClients {
        final AtomicBoolean stalled = new AtomicBoolean();
        volatile String expiring;
        final AtomicInteger expired = new AtomicInteger();
        final AtomicInteger aborted = new AtomicInteger();

        @Override
        Producer<byte[], byte[]> newProducer(Map<String, Object> config) {
            return new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer()) {
                @Override
                public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record, Callback callback) {
                    if (!record.topic().equals(expiring)) {
                        return super.send(record, callback);
                    }
                    TimeoutException expiry = new TimeoutException("Expiring 1 record(s) for " + record.topic()
                            + ": delivery.timeout.ms has passed since batch creation (injected by the test)");
                    CompletableFuture.runAsync(() -> {
                        callback.onCompletion(null, expiry);
                        expired.incrementAndGet();
                    }, CompletableFuture.delayedExecutor(200, TimeUnit.MILLISECONDS));
                    return CompletableFuture.failedFuture(expiry);
                }

                @Override
                public void abortTransaction() {
                    aborted.incrementAndGet();
                    super.abortTransaction();
                }
            };
        }

        @Override
        public Consumer<byte[], byte[]> getConsumer(Map<String, Object> config) {
            return new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer()) {
                @Override
                public ConsumerRecords<byte[], byte[]> poll(Duration timeout) {
                    while (stalled.get()) {
                        try {
                            Thread.sleep(20);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            break;
                        }
                    }
                    return super.poll(timeout);
                }
            };
        }
    }
}
