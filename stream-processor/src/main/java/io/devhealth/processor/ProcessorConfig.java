package io.devhealth.processor;

import io.devhealth.processor.internals.rules.FlapLimits;
import io.devhealth.runtime.config.ServiceConfig;
import io.devhealth.runtime.security.NodeKeys;
import io.devhealth.runtime.security.RecordVerifier;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.types.Password;

/** Typed configuration of the stream-processor; every option is also an environment variable ({@link ServiceConfig#envName}). */
public final class ProcessorConfig extends ServiceConfig {

    public static final String APPLICATION_ID = "application.id";
    public static final String STATE_DIR = "state.dir";
    public static final String PROCESSING_GUARANTEE = "processing.guarantee";
    public static final String COMMIT_INTERVAL = "commit.interval.ms";
    public static final String STREAM_THREADS = "stream.threads";
    public static final String TRANSACTIONAL_STATE_STORES = "state.transactional";
    public static final String TIMEOUT_DEFAULT = "timeout.default.seconds";
    public static final String TIMEOUT_PER_DRIVER = "timeout.per.driver";
    public static final String FLAP_THRESHOLD = "flap.threshold";
    public static final String FLAP_WINDOW = "flap.window.seconds";
    public static final String FLAP_QUIET = "flap.quiet.seconds";
    public static final String FLAP_PER_SOURCE = "flap.per.source";
    public static final String EXPIRY_INTERVAL = "expiry.interval.ms";
    public static final String RESTORE_GRACE = "silence.restore.grace.ms";
    public static final String STALL_THRESHOLD = "silence.stall.threshold.ms";
    public static final String HISTORY_RETENTION = "history.retention.days";
    public static final String TERMINATION_WINDOW_MS = ServiceConfig.TERMINATION_WINDOW_MS;
    public static final String INPUT_FUTURE_SKEW = "input.future.skew.seconds";
    public static final String ROCKSDB_MEMORY = "rocksdb.memory.bytes";
    public static final String ROCKSDB_MEMTABLE_RATIO = "rocksdb.memtable.ratio";
    public static final String HTTP_HOST = "http.host";
    public static final String HTTP_PORT = "http.port";
    public static final String PRINCIPALS_ENFORCE = "principals.enforce";
    public static final String PRINCIPALS_SECRET = "principals.secret";
    public static final String PRINCIPALS_SECRET_FILE = "principals.secret.file";
    public static final String PRINCIPALS_SECRET_PREVIOUS = "principals.secret.previous";
    public static final String PRINCIPALS_SECRET_PREVIOUS_FILE = "principals.secret.previous.file";
    public static final String FLEET_WINDOW = "fleet.window.seconds";
    public static final String FLEET_FLUSH_INTERVAL = "fleet.flush.interval.ms";
    public static final String CLOUDEVENTS_ENABLED = "cloudevents.enabled";

    public static final long DEFAULT_ROCKSDB_MEMORY = 256L << 20;
    public static final double DEFAULT_ROCKSDB_MEMTABLE_RATIO = 0.5;

    /** Every processor option; the query API's are {@code QueryConfig}'s (query-api), which the launcher's command adds. */
    public static final ConfigDef DEFINITION = pipelineOptions()
            .define(APPLICATION_ID, Type.STRING, "devhealth-processor", new ConfigDef.NonEmptyString(), Importance.HIGH,
                    "Kafka Streams application.id: consumer group, and prefix of internal topics and state directories.")
            .define(STATE_DIR, Type.STRING, "/var/lib/devhealth/state", Importance.HIGH,
                    "Where RocksDB state lives; put it on a persistent volume so restarts do not replay the changelogs.")
            .define(PROCESSING_GUARANTEE, Type.STRING, "exactly_once_v2",
                    ConfigDef.ValidString.in("exactly_once_v2", "at_least_once"), Importance.MEDIUM,
                    "Kafka Streams processing guarantee; exactly_once_v2 so that every transition is emitted once.")
            .define(COMMIT_INTERVAL, Type.LONG, 100L, ConfigDef.Range.atLeast(10), Importance.LOW,
                    "Kafka Streams commit interval; bounds end-to-end latency under exactly_once_v2.")
            .define(STREAM_THREADS, Type.INT, 1, ConfigDef.Range.atLeast(1), Importance.MEDIUM,
                    "Kafka Streams stream threads of this instance (num.stream.threads); its tasks, one per input partition "
                            + "and sub-topology, are spread over them. More than one lets an instance with cores to spare meet "
                            + "a fleet-wide event (every device changing at once) faster: each thread commits its own "
                            + "transactions, so one processes while another waits for its commit. Threads beyond the task "
                            + "count stay idle.")
            .define(TRANSACTIONAL_STATE_STORES, Type.BOOLEAN, true, Importance.MEDIUM,
                    "Kafka Streams transactional state stores (enable.transactional.statestores): writes wait in a "
                            + "buffer until their changelog transaction commits, so that under exactly_once_v2 a store is "
                            + "not wiped and rebuilt after an error or a move without a checkpoint. Without them, the "
                            + "handling of such a store lost committed-looking output of other tasks (docs/RELIABILITY.md, "
                            + "ProcessorScaleOutIT).")
            .define(TIMEOUT_DEFAULT, Type.LONG, TimeoutPolicy.DEFAULT.toSeconds(), ConfigDef.Range.atLeast(1), Importance.MEDIUM,
                    "Seconds a device report stays fresh when neither the device (health_check_timeout_seconds) nor "
                            + TIMEOUT_PER_DRIVER + " says otherwise; after that the device turns Unknown.")
            .define(TIMEOUT_PER_DRIVER, Type.LIST, "", Importance.MEDIUM,
                    "Per-source freshness timeouts as driver=seconds pairs, e.g. gpu.nvidia.com=60,nvml=20; "
                            + "overridden by a device's own health_check_timeout_seconds.")
            .define(FLAP_THRESHOLD, Type.INT, FlapPolicy.DEFAULT.flips(), ConfigDef.Range.atLeast(0), Importance.MEDIUM,
                    "Flap damping: a source that changes a device's health more than this many times within "
                            + FLAP_WINDOW + " holds the device at the least healthy of its words (reason Flapping: one "
                            + "transition when the hold starts, one when it ends) until it is quiet for " + FLAP_QUIET
                            + ". 0 turns damping off.")
            .define(FLAP_WINDOW, Type.LONG, FlapPolicy.DEFAULT.window().toSeconds(), ConfigDef.Range.atLeast(1), Importance.MEDIUM,
                    "Seconds within which more than " + FLAP_THRESHOLD + " changes of health count as flapping.")
            .define(FLAP_QUIET, Type.LONG, FlapPolicy.DEFAULT.quiet().toSeconds(), ConfigDef.Range.atLeast(1), Importance.MEDIUM,
                    "Seconds without a change of health after which a flapping device's hold ends and it shows its "
                            + "source's latest word again.")
            .define(FLAP_PER_SOURCE, Type.LIST, "", Importance.LOW,
                    "Per-source flap damping as source=flips/windowSeconds/quietSeconds entries, e.g. nvml=3/60/600 "
                            + "(source=0/1/1 turns it off for that source); the source is a driver name or nvml.")
            .define(EXPIRY_INTERVAL, Type.LONG, TopologyOptions.DEFAULT_EXPIRY_INTERVAL.toMillis(), ConfigDef.Range.between(100, 10_000),
                    Importance.LOW, "How often (wall clock) silent devices are looked for: an expiry is at most this late.")
            .define(RESTORE_GRACE, Type.LONG, TopologyOptions.DEFAULT_RESTORE_GRACE.toMillis(), ConfigDef.Range.atLeast(0), Importance.LOW,
                    "After the processor starts, restores state or was stalled, how long before silence counts again "
                            + "(time to fetch the backlog the collectors wrote meanwhile).")
            .define(STALL_THRESHOLD, Type.LONG, TopologyOptions.DEFAULT_STALL_THRESHOLD.toMillis(), ConfigDef.Range.atLeast(200),
                    Importance.LOW, "A gap this long between two expiry ticks means the processor itself was not running; "
                            + "must exceed " + EXPIRY_INTERVAL + ".")
            .define(HISTORY_RETENTION, Type.INT, (int) TopologyOptions.DEFAULT_HISTORY_RETENTION.toDays(), ConfigDef.Range.atLeast(1),
                    Importance.MEDIUM, "Days every device transition and pod status timeline is kept for post-mortem queries.")
            .define(TERMINATION_WINDOW_MS, Type.LONG, ServiceConfig.DEFAULT_TERMINATION_WINDOW.toMillis(), ConfigDef.Range.atLeast(0),
                    Importance.MEDIUM, "How long a pod that left its node's allocations (it terminated, or was deleted) still "
                            + "receives its devices' changes, so that a failure reported after the crash reaches its status; "
                            + "the sink's setting of the same name decides what of it the pod's record takes.")
            .define(INPUT_FUTURE_SKEW, Type.LONG, TimeBounds.DEFAULT_FUTURE_SKEW.toSeconds(), ConfigDef.Range.atLeast(0), Importance.MEDIUM,
                    "How far ahead of the processor's clock a collector record's observedAt, record timestamp and collector "
                            + "epoch may be; a record later than that, or older than " + HISTORY_RETENTION + ", goes to the "
                            + "dead-letter topic: one future-dated record would otherwise advance the history stores' time and "
                            + "drop everything older than their retention. Keep node clocks in sync (NTP) well within it.")
            .define(ROCKSDB_MEMORY, Type.LONG, DEFAULT_ROCKSDB_MEMORY, ConfigDef.Range.atLeast(RocksDbMemoryBudget.MIN_TOTAL_BYTES),
                    Importance.MEDIUM, "Off-heap bytes all RocksDB stores of this instance share (block cache, index/filter "
                            + "blocks and memtables together); size the container memory as heap + this + ~100 MiB.")
            .define(ROCKSDB_MEMTABLE_RATIO, Type.DOUBLE, DEFAULT_ROCKSDB_MEMTABLE_RATIO, ConfigDef.Range.between(0.05, 0.85),
                    Importance.LOW, "Share of " + ROCKSDB_MEMORY + " that memtables (write buffers) may take.")
            .define(HTTP_HOST, Type.STRING, "0.0.0.0", Importance.LOW,
                    "Address of the operations endpoint (" + HTTP_PORT + "): plain HTTP, no credentials.")
            .define(HTTP_PORT, Type.INT, -1, ConfigDef.Range.between(-1, 65_535), Importance.MEDIUM,
                    "Port of an operations endpoint of its own with /metrics, /healthz and /readyz, for the kubelet and "
                            + "Prometheus when the query API speaks HTTPS or needs client certificates (the query API keeps "
                            + "serving them too); -1 = none, 0 = any free port.")
            .define(PRINCIPALS_ENFORCE, Type.BOOLEAN, false, Importance.MEDIUM,
                    "Accept a collector record only when it is signed with its node's key (derived from "
                            + PRINCIPALS_SECRET + ") and its signed devhealth.node header names its key's node; others are "
                            + "dead-lettered and counted. Needs " + PRINCIPALS_SECRET + " or " + PRINCIPALS_SECRET_FILE
                            + ". A record's value must name its key's node in any case. See docs/SECURITY.md.")
            .define(PRINCIPALS_SECRET, Type.PASSWORD, null, Importance.HIGH,
                    "The cluster secret node keys are derived from (at least 32 bytes, e.g. openssl rand -base64 32); only "
                            + "processors and the key-issuing step hold it. From a Secret through the environment.")
            .define(PRINCIPALS_SECRET_FILE, Type.STRING, "", Importance.HIGH,
                    "File holding " + PRINCIPALS_SECRET + " (a mounted Secret); read at start. Set this or "
                            + PRINCIPALS_SECRET + ", not both.")
            .define(PRINCIPALS_SECRET_PREVIOUS, Type.PASSWORD, null, Importance.MEDIUM,
                    "During a rotation, the cluster secret being retired: keys derived from it are still accepted "
                            + "until every collector has its new key. Empty otherwise.")
            .define(PRINCIPALS_SECRET_PREVIOUS_FILE, Type.STRING, "", Importance.MEDIUM,
                    "File holding " + PRINCIPALS_SECRET_PREVIOUS + "; read at start.")
            .define(FLEET_WINDOW, Type.LONG, TopologyOptions.DEFAULT_FLEET_WINDOW.toSeconds(), ConfigDef.Range.between(1, 86_400),
                    Importance.LOW, "Size in seconds of the tumbling windows in which fleet-stats counts transitions "
                            + "per node, driver, product and reason.")
            .define(FLEET_FLUSH_INTERVAL, Type.LONG, TopologyOptions.DEFAULT_FLEET_FLUSH_INTERVAL.toMillis(),
                    ConfigDef.Range.between(10, 60_000), Importance.LOW,
                    "How often, in ms of wall-clock time, the transitions read since the last flush are folded "
                            + "into the fleet counts (one record per window and dimension value instead of one per "
                            + "transition); fleet-stats shows a transition at most this much later.")
            .define(CLOUDEVENTS_ENABLED, Type.BOOLEAN, false, Importance.MEDIUM,
                    "Mirror every health transition and every terminated pod's verdict as a CloudEvents 1.0 JSON record "
                            + "(structured mode) to <prefix>health-transitions-cloudevents, for SIEMs.");

    /** Settings the processor no longer has: starting with one fails, naming it. */
    public static final List<RemovedOption> REMOVED = List.of(
            new RemovedOption("inputs.legacy.enabled", "the processor reads only <topic.prefix>node-events, where every "
                    + "collector writes; there are no other input topics to enable. Remove the setting."));

    public ProcessorConfig(Map<?, ?> values) {
        super(DEFINITION, values, REMOVED);
        timeoutPolicy();
        if (getLong(STALL_THRESHOLD) <= getLong(EXPIRY_INTERVAL)) {
            throw new ConfigException(STALL_THRESHOLD, getLong(STALL_THRESHOLD), "must exceed " + EXPIRY_INTERVAL);
        }
        recordVerifier();
    }

    /**
     * The verifier of collector records' node signatures when {@value #PRINCIPALS_ENFORCE} is on, over
     * the current cluster secret and, during a rotation, the previous one; empty when it is off.
     *
     * @throws ConfigException when enforcement is on without a secret, a secret is set twice, too
     *                         short, unreadable, or the previous one equals the current one
     */
    public Optional<RecordVerifier> recordVerifier() {
        Optional<byte[]> current = secret(PRINCIPALS_SECRET, PRINCIPALS_SECRET_FILE);
        Optional<byte[]> previous = secret(PRINCIPALS_SECRET_PREVIOUS, PRINCIPALS_SECRET_PREVIOUS_FILE);
        if (!getBoolean(PRINCIPALS_ENFORCE)) {
            return Optional.empty();
        }
        if (current.isEmpty()) {
            throw new ConfigException(PRINCIPALS_ENFORCE, true, "needs the cluster secret: set " + PRINCIPALS_SECRET
                    + " or " + PRINCIPALS_SECRET_FILE + " (docs/SECURITY.md)");
        }
        List<byte[]> masters = new ArrayList<>();
        masters.add(current.get());
        previous.ifPresent(masters::add);
        try {
            return Optional.of(new RecordVerifier(masters));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(PRINCIPALS_SECRET_PREVIOUS, "[hidden]", e.getMessage());
        }
    }

    /**
     * The current cluster secret ({@value #PRINCIPALS_SECRET} or {@value #PRINCIPALS_SECRET_FILE}), whether
     * or not records are verified: node keys issued to collectors derive from it.
     */
    public Optional<byte[]> clusterSecret() {
        return secret(PRINCIPALS_SECRET, PRINCIPALS_SECRET_FILE);
    }

    private Optional<byte[]> secret(String option, String fileOption) {
        Password inline = getPassword(option);
        String file = getString(fileOption).strip();
        boolean hasInline = inline != null && !inline.value().isBlank();
        if (hasInline && !file.isEmpty()) {
            throw new ConfigException(fileOption, file, "set " + option + " or " + fileOption + ", not both");
        }
        String text;
        if (hasInline) {
            text = inline.value();
        } else if (!file.isEmpty()) {
            try {
                text = Files.readString(Path.of(file), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new ConfigException(fileOption, file, "cannot read the secret: " + e.getClass().getSimpleName());
            }
        } else {
            return Optional.empty();
        }
        try {
            return Optional.of(NodeKeys.masterFromSecret(text));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(hasInline ? option : fileOption, hasInline ? inline : file, e.getMessage());
        }
    }

    public static ProcessorConfig fromEnvironment(Map<String, String> env, Map<String, ?> overrides) {
        return new ProcessorConfig(resolve(DEFINITION, REMOVED, env, overrides));
    }

    public String applicationId() {
        return getString(APPLICATION_ID);
    }

    public String stateDir() {
        return getString(STATE_DIR);
    }

    public String processingGuarantee() {
        return getString(PROCESSING_GUARANTEE);
    }

    public boolean transactionalStateStores() {
        return getBoolean(TRANSACTIONAL_STATE_STORES);
    }

    public long commitIntervalMs() {
        return getLong(COMMIT_INTERVAL);
    }

    public int streamThreads() {
        return getInt(STREAM_THREADS);
    }

    public TimeoutPolicy timeoutPolicy() {
        try {
            return new TimeoutPolicy(Duration.ofSeconds(getLong(TIMEOUT_DEFAULT)),
                    TimeoutPolicy.parsePerSource(getList(TIMEOUT_PER_DRIVER)));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(TIMEOUT_PER_DRIVER, getList(TIMEOUT_PER_DRIVER), e.getMessage());
        }
    }

    public FlapPolicy flapPolicy() {
        try {
            return new FlapPolicy(new FlapLimits(getInt(FLAP_THRESHOLD), Duration.ofSeconds(getLong(FLAP_WINDOW)),
                    Duration.ofSeconds(getLong(FLAP_QUIET))), FlapPolicy.parsePerSource(getList(FLAP_PER_SOURCE)));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(FLAP_PER_SOURCE, getList(FLAP_PER_SOURCE), e.getMessage());
        }
    }

    /** The topology's behaviour settings, counting into {@code meters}. */
    public TopologyOptions topologyOptions(MeterRegistry meters) {
        return TopologyOptions.builder()
                .timeouts(timeoutPolicy())
                .flapDamping(flapPolicy())
                .expiryInterval(Duration.ofMillis(getLong(EXPIRY_INTERVAL)))
                .restoreGrace(Duration.ofMillis(getLong(RESTORE_GRACE)))
                .stallThreshold(Duration.ofMillis(getLong(STALL_THRESHOLD)))
                .historyRetention(Duration.ofDays(getInt(HISTORY_RETENTION)))
                .terminationWindow(Duration.ofMillis(getLong(TERMINATION_WINDOW_MS)))
                .meters(meters)
                .enforcePrincipals(getBoolean(PRINCIPALS_ENFORCE))
                .fleetWindow(Duration.ofSeconds(getLong(FLEET_WINDOW)))
                .fleetFlushInterval(Duration.ofMillis(getLong(FLEET_FLUSH_INTERVAL)))
                .cloudEvents(getBoolean(CLOUDEVENTS_ENABLED))
                .timeBounds(new TimeBounds(Duration.ofSeconds(getLong(INPUT_FUTURE_SKEW)), Duration.ofDays(getInt(HISTORY_RETENTION))))
                .build();
    }

    public RocksDbMemoryBudget rocksDbMemory() {
        return new RocksDbMemoryBudget(getLong(ROCKSDB_MEMORY), getDouble(ROCKSDB_MEMTABLE_RATIO),
                BoundedMemoryRocksDbConfig.INDEX_FILTER_RATIO);
    }

    public String httpHost() {
        return getString(HTTP_HOST);
    }

    /** Port of the operations endpoint; -1 when there is none. */
    public int httpPort() {
        return getInt(HTTP_PORT);
    }
}
