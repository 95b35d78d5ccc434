package io.devhealth.sink;

import io.devhealth.runtime.config.ServiceConfig;
import io.devhealth.sink.taints.TaintRuleSettings;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;

/** Typed configuration of the sink-apiserver; every option is also an environment variable ({@link ServiceConfig#envName}). */
public final class SinkConfig extends ServiceConfig {

    public static final String GROUP_ID = "group.id";
    public static final String KUBERNETES_MASTER = "kubernetes.master";
    public static final String FIELD_MANAGER = "field.manager";
    public static final String HTTP_HOST = "http.host";
    public static final String HTTP_PORT = "http.port";
    public static final String API_QPS = "api.qps";
    public static final String API_BURST = "api.burst";
    public static final String API_REQUEST_TIMEOUT_MS = "api.request.timeout.ms";
    public static final String WRITE_CONCURRENCY = "write.concurrency";
    public static final String RETRY_MAX_ATTEMPTS = "retry.max.attempts";
    public static final String RETRY_INITIAL_INTERVAL_MS = "retry.initial.interval.ms";
    public static final String RETRY_MAX_INTERVAL_MS = "retry.max.interval.ms";
    public static final String CONFLICT_MAX_ATTEMPTS = "conflict.max.attempts";
    public static final String TERMINATION_WINDOW_MS = ServiceConfig.TERMINATION_WINDOW_MS;
    public static final String TERMINATION_WATCH = "termination.watch";
    public static final String POD_CACHE = "pod.cache";
    public static final Duration DEFAULT_TERMINATION_WINDOW = ServiceConfig.DEFAULT_TERMINATION_WINDOW;
    public static final int DEFAULT_CONFLICT_MAX_ATTEMPTS = 10;
    public static final String TRACKED_PODS_MAX = "tracked.pods.max";
    public static final String EVENTS_ENABLED = "events.enabled";
    public static final String EVENTS_PER_POD_BURST = "events.per.pod.burst";
    public static final String EVENTS_PER_POD_INTERVAL_MS = "events.per.pod.interval.ms";
    public static final String EVENTS_CONCURRENCY = "events.concurrency";
    public static final String EVENTS_QUEUE = "events.queue";
    public static final String POSTMORTEM_RETENTION_MS = "postmortem.retention.ms";
    public static final String POSTMORTEM_SWEEP_INTERVAL_MS = "postmortem.sweep.interval.ms";
    public static final String TAINT_RULES_ENABLED = "taint.rules.enabled";
    public static final String TAINT_RULES_DRY_RUN = "taint.rules.dry.run";
    public static final String TAINT_RULES_GROUP_ID = "taint.rules.group.id";
    public static final String TAINT_RULES_MIN_HOLD_MS = "taint.rules.min.hold.ms";
    public static final String TAINT_RULES_MAX_PER_NODE = "taint.rules.max.per.node";
    public static final String TAINT_RULES_BREAKER_NODE_FRACTION = "taint.rules.breaker.node.fraction";
    public static final String TAINT_RULES_BREAKER_WINDOW_MS = "taint.rules.breaker.window.ms";

    /** Settings the sink no longer has: starting with one fails, naming it. */
    public static final List<RemovedOption> REMOVED = List.of(
            new RemovedOption("mode", "the sink no longer writes allocatedResourcesStatus (the kubelet owns that field and puts "
                    + "back any other writer's value within one sync). It writes its condition on every pod and a DevicePostMortem "
                    + "record for every terminated pod. Remove the setting."),
            new RemovedOption("field.recheck.interval.ms", "the sink no longer writes allocatedResourcesStatus, so there is no "
                    + "field support to re-check. Remove the setting."));

    public static final ConfigDef DEFINITION = pipelineOptions()
            .define(GROUP_ID, Type.STRING, "devhealth-sink", new ConfigDef.NonEmptyString(), Importance.MEDIUM,
                    "Consumer group of the sink.")
            .define(KUBERNETES_MASTER, Type.STRING, "", Importance.MEDIUM,
                    "API server URL; empty means in-cluster service account or ~/.kube/config.")
            .define(FIELD_MANAGER, Type.STRING, "devhealth-sink", Importance.LOW,
                    "Name recorded as the writer of the fields the sink changes.")
            .define(API_QPS, Type.DOUBLE, 400.0, ConfigDef.Range.between(0.1, 10_000), Importance.MEDIUM,
                    "Token-bucket rate of every API request the sink makes (reads, patches, events), per sink instance. "
                            + "Sized for a fleet-wide incident: 10,000 pod changes within a minute are a status write and an Event "
                            + "each, about 333 requests/s. What the sink may take of a shared API server is bounded by the API "
                            + "server itself, through the sink's own priority level (k8s/base/sink-apiserver/flowcontrol.yaml), "
                            + "which queues or refuses (429, honoured with its Retry-After) what exceeds the level's share.")
            .define(API_BURST, Type.INT, 400, ConfigDef.Range.between(1, 100_000), Importance.MEDIUM,
                    "Requests allowed at once before the rate applies (the bucket's size).")
            .define(API_REQUEST_TIMEOUT_MS, Type.INT, 10_000, ConfigDef.Range.between(100, 600_000), Importance.LOW,
                    "Timeout of one API request; a timed-out request is retried with backoff.")
            .define(WRITE_CONCURRENCY, Type.INT, 24, ConfigDef.Range.between(1, 256), Importance.MEDIUM,
                    "Pods written at the same time; writes for one pod are always serialized. The default is the seats the "
                            + "sink's priority level is given on an API server with the default 600 (10 shares of 255): more "
                            + "would wait in the API server's queues.")
            .define(RETRY_MAX_ATTEMPTS, Type.INT, 6, ConfigDef.Range.between(1, 100), Importance.LOW,
                    "Attempts of one request on 429, 5xx, timeouts or an unreachable API server before the pod is "
                            + "set aside and consumption pauses until the API server answers again.")
            .define(RETRY_INITIAL_INTERVAL_MS, Type.LONG, 500L, ConfigDef.Range.between(1, 600_000), Importance.LOW,
                    "First backoff; doubled per attempt with ±50% jitter. A Retry-After from the server wins when longer.")
            .define(RETRY_MAX_INTERVAL_MS, Type.LONG, 30_000L, ConfigDef.Range.between(1, 3_600_000), Importance.LOW,
                    "Longest backoff between attempts, and between re-tries of a set-aside pod.")
            .define(CONFLICT_MAX_ATTEMPTS, Type.INT, DEFAULT_CONFLICT_MAX_ATTEMPTS, ConfigDef.Range.between(1, 1000), Importance.LOW,
                    "Re-reads after a conflict (409, or a failed resourceVersion test) before the write is retried later.")
            .define(TERMINATION_WINDOW_MS, Type.LONG, DEFAULT_TERMINATION_WINDOW.toMillis(), ConfigDef.Range.atLeast(0), Importance.MEDIUM,
                    "After a container's finishedAt, Unhealthy reports still apply for this long (failures are often "
                            + "reported after the crash); then the terminated pod's device status is frozen.")
            .define(TERMINATION_WATCH, Type.BOOLEAN, true, Importance.LOW,
                    "Watch pods that reach Succeeded/Failed (list/watch pods) so that terminated pods get their final "
                            + "status and are frozen even when no new device status arrives.")
            .define(POD_CACHE, Type.BOOLEAN, true, Importance.LOW,
                    "Keep a slim copy of every pod from one watch (list/watch pods, shared with " + TERMINATION_WATCH + ") "
                            + "and write from it, instead of reading each pod before its write: about one API request per "
                            + "change instead of two. Off: every write reads its pod.")
            .define(TRACKED_PODS_MAX, Type.INT, 100_000, ConfigDef.Range.between(100, 10_000_000), Importance.LOW,
                    "Pods whose last device status is kept in memory (least recently used are forgotten first).")
            .define(EVENTS_ENABLED, Type.BOOLEAN, true, Importance.LOW,
                    "Create a Kubernetes Event on the pod for each device health transition that affects it.")
            .define(EVENTS_PER_POD_BURST, Type.INT, 5, ConfigDef.Range.between(1, 1000), Importance.LOW,
                    "Events one pod may get at once; further ones need a token refilled every events.per.pod.interval.ms.")
            .define(EVENTS_PER_POD_INTERVAL_MS, Type.LONG, 60_000L, ConfigDef.Range.between(1, 86_400_000), Importance.LOW,
                    "Refill interval of one pod's event tokens.")
            .define(EVENTS_CONCURRENCY, Type.INT, 2, ConfigDef.Range.between(1, 64), Importance.LOW,
                    "Threads that create Events, apart from the condition writers: Events never hold a condition write's "
                            + "slot, and take at most this many of the API server's seats.")
            .define(EVENTS_QUEUE, Type.INT, 1000, ConfigDef.Range.between(1, 1_000_000), Importance.LOW,
                    "Events waiting to be created; when full, a new Event is dropped and counted "
                            + "(devhealth_sink_events_total{result=\"dropped\"}), as Kubernetes' own event recorder drops "
                            + "beyond 1,000. The condition always says the same.")
            .define(POSTMORTEM_RETENTION_MS, Type.LONG, Duration.ofDays(30).toMillis(), ConfigDef.Range.atLeast(60_000), Importance.MEDIUM,
                    "How long a terminated pod's DevicePostMortem record is kept after the pod finished; after that the sink "
                            + "deletes it once the pod itself is gone (never while the pod still exists).")
            .define(POSTMORTEM_SWEEP_INTERVAL_MS, Type.LONG, Duration.ofHours(1).toMillis(), ConfigDef.Range.between(1000, 604_800_000),
                    Importance.LOW, "How often the sink looks for DevicePostMortem records past their retention.")
            .define(TAINT_RULES_ENABLED, Type.BOOLEAN, false, Importance.MEDIUM,
                    "Retry elsewhere: for a DRA device devhealth judges Unhealthy and its driver has not tainted, create a "
                            + "DeviceTaintRule (resource.k8s.io/v1beta2, NoSchedule) selecting that device, so that the scheduler "
                            + "gives a retried pod another one; delete it when the device is Healthy again (not before "
                            + TAINT_RULES_MIN_HOLD_MS + "). Needs the k8s/components/device-taint-rules RBAC and Read on "
                            + "health-transitions with the group " + TAINT_RULES_GROUP_ID + ".")
            .define(TAINT_RULES_DRY_RUN, Type.BOOLEAN, false, Importance.MEDIUM,
                    "With " + TAINT_RULES_ENABLED + ": decide as usual, but only log and count the rules that would be created "
                            + "and deleted; write nothing.")
            .define(TAINT_RULES_GROUP_ID, Type.STRING, "devhealth-sink-taints", new ConfigDef.NonEmptyString(), Importance.LOW,
                    "Consumer group of the health-transitions consumer that decides about DeviceTaintRules.")
            .define(TAINT_RULES_MIN_HOLD_MS, Type.LONG, Duration.ofMinutes(10).toMillis(), ConfigDef.Range.between(0, 604_800_000),
                    Importance.MEDIUM, "A rule stays at least this long after it was created, even when the device is Healthy "
                            + "sooner: a flapping GPU is not offered again at once.")
            .define(TAINT_RULES_MAX_PER_NODE, Type.INT, 2, ConfigDef.Range.between(1, 1024), Importance.MEDIUM,
                    "Most devices of one node that devhealth taints at once; further Unhealthy devices of that node get no rule.")
            .define(TAINT_RULES_BREAKER_NODE_FRACTION, Type.DOUBLE, 0.5, ConfigDef.Range.between(0.0, 1.0), Importance.MEDIUM,
                    "Fleet circuit breaker: when devices on more than this fraction of the cluster's nodes needed a rule within "
                            + TAINT_RULES_BREAKER_WINDOW_MS + ", no rule is created until that falls under it again (a mass "
                            + "event is more likely a bug of devhealth or of a driver than broken hardware). 1.0 turns it off.")
            .define(TAINT_RULES_BREAKER_WINDOW_MS, Type.LONG, Duration.ofMinutes(5).toMillis(), ConfigDef.Range.between(1_000, 86_400_000),
                    Importance.LOW, "The window over which the circuit breaker counts nodes.")
            .define(HTTP_HOST, Type.STRING, "0.0.0.0", Importance.LOW, "Address of the /metrics, /healthz and /readyz endpoint.")
            .define(HTTP_PORT, Type.INT, -1, ConfigDef.Range.between(-1, 65_535), Importance.MEDIUM,
                    "Port of the /metrics, /healthz and /readyz endpoint; -1 = no endpoint, 0 = any free port. A Deployment sets one (8080).");

    public SinkConfig(Map<?, ?> values) {
        super(DEFINITION, values, REMOVED);
    }

    public static SinkConfig fromEnvironment(Map<String, String> env, Map<String, ?> overrides) {
        return new SinkConfig(resolve(DEFINITION, REMOVED, env, overrides));
    }

    public String groupId() {
        return getString(GROUP_ID);
    }

    public String kubernetesMaster() {
        return getString(KUBERNETES_MASTER);
    }

    public String httpHost() {
        return getString(HTTP_HOST);
    }

    public int httpPort() {
        return getInt(HTTP_PORT);
    }

    public String fieldManager() {
        return getString(FIELD_MANAGER);
    }

    public double apiQps() {
        return getDouble(API_QPS);
    }

    public int apiBurst() {
        return getInt(API_BURST);
    }

    public Duration apiRequestTimeout() {
        return Duration.ofMillis(getInt(API_REQUEST_TIMEOUT_MS));
    }

    public int writeConcurrency() {
        return getInt(WRITE_CONCURRENCY);
    }

    public int retryMaxAttempts() {
        return getInt(RETRY_MAX_ATTEMPTS);
    }

    public Duration retryInitialInterval() {
        return Duration.ofMillis(getLong(RETRY_INITIAL_INTERVAL_MS));
    }

    public Duration retryMaxInterval() {
        return Duration.ofMillis(getLong(RETRY_MAX_INTERVAL_MS));
    }

    public int conflictMaxAttempts() {
        return getInt(CONFLICT_MAX_ATTEMPTS);
    }

    public Duration terminationWindow() {
        return Duration.ofMillis(getLong(TERMINATION_WINDOW_MS));
    }

    public boolean terminationWatch() {
        return getBoolean(TERMINATION_WATCH);
    }

    public boolean podCache() {
        return getBoolean(POD_CACHE);
    }

    public int trackedPodsMax() {
        return getInt(TRACKED_PODS_MAX);
    }

    public boolean eventsEnabled() {
        return getBoolean(EVENTS_ENABLED);
    }

    public int eventsPerPodBurst() {
        return getInt(EVENTS_PER_POD_BURST);
    }

    public Duration eventsPerPodInterval() {
        return Duration.ofMillis(getLong(EVENTS_PER_POD_INTERVAL_MS));
    }

    public int eventsConcurrency() {
        return getInt(EVENTS_CONCURRENCY);
    }

    public int eventsQueue() {
        return getInt(EVENTS_QUEUE);
    }

    public Duration postMortemRetention() {
        return Duration.ofMillis(getLong(POSTMORTEM_RETENTION_MS));
    }

    public Duration postMortemSweepInterval() {
        return Duration.ofMillis(getLong(POSTMORTEM_SWEEP_INTERVAL_MS));
    }

    /** The retry-elsewhere settings ({@code taint.rules.*}). */
    public TaintRuleSettings taintRules() {
        return new TaintRuleSettings(getBoolean(TAINT_RULES_ENABLED), getBoolean(TAINT_RULES_DRY_RUN), getString(TAINT_RULES_GROUP_ID),
                Duration.ofMillis(getLong(TAINT_RULES_MIN_HOLD_MS)), getInt(TAINT_RULES_MAX_PER_NODE),
                getDouble(TAINT_RULES_BREAKER_NODE_FRACTION), Duration.ofMillis(getLong(TAINT_RULES_BREAKER_WINDOW_MS)));
    }
}
