package io.devhealth.processor;

import io.devhealth.runtime.ops.HealthServer;
import io.devhealth.schema.serde.SchemaRegistries;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Optional;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.state.HostInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the {@link DeviceHealthTopology} with Kafka Streams. The query API (query-api's {@code QueryableProcessor}) is
 * composed beside it: this class knows only the address it advertises as Kafka Streams' {@code application.server},
 * so that the instances can tell each other where a key's state is held.
 */
public final class StreamProcessorApp implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(StreamProcessorApp.class);
    static final String PRINCIPALS_ENFORCED_GAUGE = "devhealth.processor.principals.enforced";
    static final String FENCED_TRANSACTIONS_METER = "devhealth.processor.transactions.fenced";
    /**
     * How long {@link #start} waits for the topic list of {@link InputTopicsCheck}: a reachable cluster answers in
     * milliseconds; past this the processor starts unchecked rather than hold a pod back from a slow cluster.
     */
    static final Duration INPUT_TOPICS_TIMEOUT = Duration.ofSeconds(30);

    private final PrometheusMeterRegistry meters = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final KafkaStreams streams;
    /** The input-topic check's at start, and the query API's (the changelogs' last stable offsets, for standby reads). */
    private final Admin admin;
    private final KafkaStreamsMetrics streamsMetrics;
    private final ProcessorConfig config;

    /**
     * @param clients the Kafka clients Kafka Streams runs on (tests wrap them to stall or fail them)
     * @param applicationServer where this instance's query API is reached, advertised to the other instances as
     *        Kafka Streams' {@code application.server}; empty without one
     */
    public StreamProcessorApp(ProcessorConfig config, ProcessorClients clients, Optional<HostInfo> applicationServer) {
        this.config = config;
        FunctionCounter.builder(FENCED_TRANSACTIONS_METER, clients, ProcessorClients::fencedTransactions)
                .description("Transactions aborted with records in them, after which every task of the stream thread was rewound"
                        + " to its committed offsets (AbortFencingProducer); each one reprocesses since the last commit")
                .register(meters);
        ProcessorSerdes serdes = ProcessorSerdes.over(SchemaRegistries.fromUrl(config.schemaRegistryUrl(), config.originals()),
                        config.autoRegisterSchemas())
                .authenticated(config.topics(), config.recordVerifier(), meters);
        reportNodeSignatures(config.recordVerifier().isPresent(), meters);
        Properties props = streamsProperties(config);
        DeadLetterHandler.configure(props, config.topics().deadLetters(), serdes.deadLetters().serializer(), meters,
                DeviceHealthTopology.inputTopics(config.topics()));
        applicationServer.ifPresent(host -> props.put(StreamsConfig.APPLICATION_SERVER_CONFIG, host.host() + ":" + host.port()));
        this.streams = new KafkaStreams(DeviceHealthTopology.build(config.topics(), serdes, config.topologyOptions(meters)), props, clients);
        this.admin = Admin.create(new StreamsConfig(props).getAdminConfigs(config.applicationId() + "-admin"));
        this.streamsMetrics = new KafkaStreamsMetrics(streams);
        streamsMetrics.bindTo(meters);
        RestoreProgress restores = new RestoreProgress(meters);
        streams.setGlobalStateRestoreListener(restores);
        streams.setStandbyUpdateListener(restores);
    }

    /**
     * Says whether collector records must carry their node's signature: a gauge that alerting can
     * watch (1 enforced, 0 not) and, when not, a warning, since then any client that may write
     * node-events can speak for any node.
     */
    static void reportNodeSignatures(boolean enforced, MeterRegistry registry) {
        Gauge.builder(PRINCIPALS_ENFORCED_GAUGE, () -> enforced ? 1 : 0)
                .description("1 when collector records must be signed with their node's key (principals.enforce), else 0")
                .register(registry);
        if (!enforced) {
            LOGGER.warn("node signatures are not enforced: any client that can write node-events can speak for any node; "
                    + "set {}=true with {} (docs/SECURITY.md) setting={}", ProcessorConfig.PRINCIPALS_ENFORCE,
                    ProcessorConfig.PRINCIPALS_SECRET, ProcessorConfig.PRINCIPALS_ENFORCE);
        }
    }

    /** Kafka Streams settings; shared with tests so they run what production runs. */
    public static Properties streamsProperties(ProcessorConfig config) {
        Properties props = new Properties();
        props.putAll(config.kafkaClientProperties());
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, config.applicationId());
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
        props.put(StreamsConfig.STATE_DIR_CONFIG, config.stateDir());
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, config.processingGuarantee());
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, config.commitIntervalMs());
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, config.streamThreads());
        // Under exactly-once, a store found without a checkpoint (a standby's, after a restart or a move) is otherwise
        // wiped, and handling that on a stream thread lost transitions of tasks that were fine (ProcessorScaleOutIT).
        props.put(StreamsConfig.TRANSACTIONAL_STATE_STORES_CONFIG, config.transactionalStateStores());
        // The 5.0 default, opted into now (and silences the 4.x warning).
        props.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_GLOBAL_ENABLED_CONFIG, true);
        // Every task reads one partition (DeviceHealthTopologyTest), so there is no other partition to wait for and
        // task idling decides nothing. Left on, Kafka Streams 4.4 formats a log message (String.format) for every empty
        // partition each time it asks a task whether it can process (PartitionGroup#readyToProcess returns at once
        // only for -1): 5 % of the stream thread in a first contact's profile.
        props.put(StreamsConfig.MAX_TASK_IDLE_MS_CONFIG, StreamsConfig.MAX_TASK_IDLE_MS_DISABLED);
        props.put(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, BoundedMemoryRocksDbConfig.class.getName());
        RocksDbMemoryBudget memory = config.rocksDbMemory();
        props.put(BoundedMemoryRocksDbConfig.TOTAL_BYTES_CONFIG, Long.toString(memory.totalBytes()));
        props.put(BoundedMemoryRocksDbConfig.MEMTABLE_RATIO_CONFIG, Double.toString(memory.memtableRatio()));
        return props;
    }

    /**
     * Starts Kafka Streams.
     *
     * @throws MissingInputTopicsException when the cluster lacks an input topic; Kafka Streams was not started then
     */
    public void start() {
        InputTopicsCheck.requireTopics(admin, DeviceHealthTopology.inputTopics(config.topics()), INPUT_TOPICS_TIMEOUT);
        streams.setUncaughtExceptionHandler(error -> {
            LOGGER.error("stream thread failed, replacing it error=\"{}\"", error.toString(), error);
            return StreamThreadExceptionResponse.REPLACE_THREAD;
        });
        streams.start();
        LOGGER.info("processor started applicationId={}", config.applicationId());
    }

    /**
     * What a graceful close (SIGTERM: a rolling restart, a scale-down) does with this instance's place in
     * the group. Kafka Streams' own default keeps a member of the classic protocol in the group
     * ({@code StreamThread#completeShutdown} maps {@code DEFAULT} to {@code REMAIN_IN_GROUP}), so the
     * partitions of a dynamic member that closed stay assigned to it, unprocessed and unanswerable, until
     * its session times out (45 s by default) — on every step of a rolling restart. A dynamic member
     * therefore leaves at once and its partitions move to the standbys. A static member
     * ({@code group.instance.id}) stays: it comes back under the same id within the session timeout and
     * gets its partitions back without a rebalance, which is what static membership is for.
     */
    static CloseOptions.GroupMembershipOperation membershipOnClose(Properties streamsProperties) {
        boolean staticMember = streamsProperties.containsKey(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG)
                || streamsProperties.containsKey(StreamsConfig.mainConsumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG))
                || streamsProperties.containsKey(StreamsConfig.consumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG));
        return staticMember ? CloseOptions.GroupMembershipOperation.REMAIN_IN_GROUP : CloseOptions.GroupMembershipOperation.LEAVE_GROUP;
    }

    /** Ready when Kafka Streams runs, as the query API's /readyz says. */
    public HealthServer.Check readiness() {
        KafkaStreams.State state = streams.state();
        return state == KafkaStreams.State.RUNNING ? HealthServer.Check.ok(state.toString()) : HealthServer.Check.failed(state.toString());
    }

    public KafkaStreams streams() {
        return streams;
    }

    /** The admin client the processor checks its input topics with, which the query API shares. */
    public Admin admin() {
        return admin;
    }

    public ProcessorConfig config() {
        return config;
    }

    public PrometheusMeterRegistry meters() {
        return meters;
    }

    @Override
    public void close() {
        admin.close(Duration.ofSeconds(5));
        streams.close(CloseOptions.timeout(Duration.ofSeconds(10)).withGroupMembershipOperation(membershipOnClose(streamsProperties(config))));
        streamsMetrics.close();
        meters.close();
    }
}
