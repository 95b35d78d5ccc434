package io.devhealth.processor;

import io.devhealth.processor.query.QuerySecurityConfig;
import io.devhealth.schema.config.ServiceConfig;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;

/** Typed configuration of the stream-processor; every option is also an environment variable ({@link ServiceConfig#envName}). */
public final class ProcessorConfig extends ServiceConfig {

    public static final String APPLICATION_ID = "application.id";
    public static final String STATE_DIR = "state.dir";
    public static final String PROCESSING_GUARANTEE = "processing.guarantee";
    public static final String COMMIT_INTERVAL = "commit.interval.ms";
    public static final String TIMEOUT_DEFAULT = "timeout.default.seconds";
    public static final String TIMEOUT_PER_DRIVER = "timeout.per.driver";
    public static final String EXPIRY_INTERVAL = "expiry.interval.ms";
    public static final String RESTORE_GRACE = "silence.restore.grace.ms";
    public static final String STALL_THRESHOLD = "silence.stall.threshold.ms";
    public static final String HISTORY_RETENTION = "history.retention.days";
    public static final String ROCKSDB_MEMORY = "rocksdb.memory.bytes";
    public static final String ROCKSDB_MEMTABLE_RATIO = "rocksdb.memtable.ratio";
    public static final String QUERY_BIND_ADDRESS = "query.bind.address";
    public static final String QUERY_PORT = "query.port";
    public static final String QUERY_ADVERTISED_HOST = "query.advertised.host";
    public static final String PRINCIPALS_ENFORCE = "principals.enforce";
    public static final String FLEET_WINDOW = "fleet.window.seconds";
    public static final String CLOUDEVENTS_ENABLED = "cloudevents.enabled";

    public static final long DEFAULT_ROCKSDB_MEMORY = 256L << 20;
    public static final double DEFAULT_ROCKSDB_MEMTABLE_RATIO = 0.5;
    public static final int DEFAULT_QUERY_PORT = 8080;

    /** Every processor option, the query API's security ({@link QuerySecurityConfig}) included. */
    public static final ConfigDef DEFINITION = QuerySecurityConfig.define(pipelineOptions())
            .define(APPLICATION_ID, Type.STRING, "devhealth-processor", new ConfigDef.NonEmptyString(), Importance.HIGH,
                    "Kafka Streams application.id: consumer group, and prefix of internal topics and state directories.")
            .define(STATE_DIR, Type.STRING, "/var/lib/devhealth/state", Importance.HIGH,
                    "Where RocksDB state lives; put it on a persistent volume so restarts do not replay the changelogs.")
            .define(PROCESSING_GUARANTEE, Type.STRING, "exactly_once_v2",
                    ConfigDef.ValidString.in("exactly_once_v2", "at_least_once"), Importance.MEDIUM,
                    "Kafka Streams processing guarantee; exactly_once_v2 so that every transition is emitted once.")
            .define(COMMIT_INTERVAL, Type.LONG, 100L, ConfigDef.Range.atLeast(10), Importance.LOW,
                    "Kafka Streams commit interval; bounds end-to-end latency under exactly_once_v2.")
            .define(TIMEOUT_DEFAULT, Type.LONG, TimeoutPolicy.DEFAULT.toSeconds(), ConfigDef.Range.atLeast(1), Importance.MEDIUM,
                    "Seconds a device report stays fresh when neither the device (health_check_timeout_seconds) nor "
                            + TIMEOUT_PER_DRIVER + " says otherwise; after that the device turns Unknown.")
            .define(TIMEOUT_PER_DRIVER, Type.LIST, "", Importance.MEDIUM,
                    "Per-source freshness timeouts as driver=seconds pairs, e.g. gpu.nvidia.com=60,nvml=20; "
                            + "overridden by a device's own health_check_timeout_seconds.")
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
            .define(ROCKSDB_MEMORY, Type.LONG, DEFAULT_ROCKSDB_MEMORY, ConfigDef.Range.atLeast(RocksDbMemoryBudget.MIN_TOTAL_BYTES),
                    Importance.MEDIUM, "Off-heap bytes all RocksDB stores of this instance share (block cache, index/filter "
                            + "blocks and memtables together); size the container memory as heap + this + ~100 MiB.")
            .define(ROCKSDB_MEMTABLE_RATIO, Type.DOUBLE, DEFAULT_ROCKSDB_MEMTABLE_RATIO, ConfigDef.Range.between(0.05, 0.85),
                    Importance.LOW, "Share of " + ROCKSDB_MEMORY + " that memtables (write buffers) may take.")
            .define(QUERY_BIND_ADDRESS, Type.STRING, "0.0.0.0", Importance.LOW,
                    "Address the query API (/v1, /healthz, /readyz, /metrics) listens on.")
            .define(QUERY_PORT, Type.INT, DEFAULT_QUERY_PORT, ConfigDef.Range.between(0, 65535), Importance.MEDIUM,
                    "Port of the query API; 0 picks a free one (tests, embedded demo).")
            .define(QUERY_ADVERTISED_HOST, Type.STRING, "", Importance.MEDIUM,
                    "Host name other instances use to reach this one's query API (Kafka Streams application.server); "
                            + "empty = this machine's host name. In Kubernetes: the pod's stable DNS name.")
            .define(PRINCIPALS_ENFORCE, Type.BOOLEAN, false, Importance.MEDIUM,
                    "Also require every collector record to carry the devhealth.node header naming its key's node; "
                            + "a record's value must name its key's node in any case. See docs/SECURITY.md.")
            .define(FLEET_WINDOW, Type.LONG, TopologyOptions.DEFAULT_FLEET_WINDOW.toSeconds(), ConfigDef.Range.between(1, 86_400),
                    Importance.LOW, "Size in seconds of the tumbling windows in which fleet-stats counts transitions "
                            + "per node, driver, product and reason.")
            .define(CLOUDEVENTS_ENABLED, Type.BOOLEAN, false, Importance.MEDIUM,
                    "Mirror every health transition as a CloudEvents 1.0 JSON record (structured mode) to "
                            + "<prefix>health-transitions-cloudevents, for SIEMs.");

    public ProcessorConfig(Map<?, ?> values) {
        super(DEFINITION, values);
        timeoutPolicy();
        if (getLong(STALL_THRESHOLD) <= getLong(EXPIRY_INTERVAL)) {
            throw new ConfigException(STALL_THRESHOLD, getLong(STALL_THRESHOLD), "must exceed " + EXPIRY_INTERVAL);
        }
    }

    /** Authentication and TLS of the query API (query.auth.*, query.tls.*). */
    public QuerySecurityConfig querySecurity() {
        return QuerySecurityConfig.from(this);
    }

    public static ProcessorConfig fromEnvironment(Map<String, String> env, Map<String, ?> overrides) {
        return new ProcessorConfig(resolve(DEFINITION, env, overrides));
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

    public long commitIntervalMs() {
        return getLong(COMMIT_INTERVAL);
    }

    public TimeoutPolicy timeoutPolicy() {
        try {
            return new TimeoutPolicy(Duration.ofSeconds(getLong(TIMEOUT_DEFAULT)),
                    TimeoutPolicy.parsePerSource(getList(TIMEOUT_PER_DRIVER)));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(TIMEOUT_PER_DRIVER, getList(TIMEOUT_PER_DRIVER), e.getMessage());
        }
    }

    /** The topology's behaviour settings, counting into {@code meters}. */
    public TopologyOptions topologyOptions(MeterRegistry meters) {
        return new TopologyOptions(timeoutPolicy(), Duration.ofMillis(getLong(EXPIRY_INTERVAL)),
                Duration.ofMillis(getLong(RESTORE_GRACE)), Duration.ofMillis(getLong(STALL_THRESHOLD)),
                Duration.ofDays(getInt(HISTORY_RETENTION)), meters, getBoolean(PRINCIPALS_ENFORCE),
                Duration.ofSeconds(getLong(FLEET_WINDOW)), getBoolean(CLOUDEVENTS_ENABLED));
    }

    public RocksDbMemoryBudget rocksDbMemory() {
        return new RocksDbMemoryBudget(getLong(ROCKSDB_MEMORY), getDouble(ROCKSDB_MEMTABLE_RATIO),
                BoundedMemoryRocksDbConfig.INDEX_FILTER_RATIO);
    }

    public String queryBindAddress() {
        return getString(QUERY_BIND_ADDRESS);
    }

    public int queryPort() {
        return getInt(QUERY_PORT);
    }

    public String queryAdvertisedHost() {
        return getString(QUERY_ADVERTISED_HOST);
    }
}
