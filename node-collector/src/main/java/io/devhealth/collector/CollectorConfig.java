package io.devhealth.collector;

import io.devhealth.schema.Topics;
import io.devhealth.schema.config.ServiceConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigException;

/** Typed configuration of the node-collector; every option is also an environment variable ({@link ServiceConfig#envName}). */
public final class CollectorConfig extends ServiceConfig {

    public static final String NODE_NAME = "node.name";
    public static final String CLUSTER_NAME = "cluster.name";
    public static final String BOOTSTRAP_SERVERS = "kafka.bootstrap.servers";
    public static final String SCHEMA_REGISTRY_URL = "schema.registry.url";
    public static final String TOPIC_PREFIX = "topic.prefix";
    public static final String DRA_DRIVERS = "dra.drivers";
    public static final String DRA_DEFAULT_TIMEOUT = "dra.default.timeout.seconds";
    public static final String POD_RESOURCES_SOCKET = "podresources.socket";
    public static final String POD_RESOURCES_POLL_INTERVAL = "podresources.poll.interval.ms";
    public static final String ALLOCATIONS_RESEND_INTERVAL = "allocations.resend.interval.ms";
    public static final String RECONNECT_BACKOFF_MAX = "reconnect.backoff.max.ms";
    public static final String HEARTBEAT_INTERVAL = "heartbeat.interval.ms";

    public static final ConfigDef DEFINITION = new ConfigDef()
            .define(NODE_NAME, Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new ConfigDef.NonEmptyString(), Importance.HIGH,
                    "Name of the Kubernetes node this collector runs on (the downward API's spec.nodeName). Key of every record it writes.")
            .define(CLUSTER_NAME, Type.STRING, "", Importance.MEDIUM, "Cluster name stamped on every record, for fleets of several clusters.")
            .define(BOOTSTRAP_SERVERS, Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new ConfigDef.NonEmptyString(), Importance.HIGH,
                    "Kafka bootstrap servers.")
            .define(SCHEMA_REGISTRY_URL, Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new ConfigDef.NonEmptyString(), Importance.HIGH,
                    "Confluent-compatible schema registry URL (e.g. http://apicurio:8080/apis/ccompat/v7); mem://<name> for the embedded demo.")
            .define(TOPIC_PREFIX, Type.STRING, Topics.DEFAULT_PREFIX, Importance.MEDIUM, "Prefix of every topic name.")
            .define(DRA_DRIVERS, Type.LIST, "", Importance.HIGH,
                    "Statically configured DRA drivers as <driver>=<service socket path>, comma separated. "
                            + "Each is streamed with DRAResourceHealth v1alpha1.")
            .define(DRA_DEFAULT_TIMEOUT, Type.LONG, 30L, ConfigDef.Range.atLeast(1), Importance.LOW,
                    "Health timeout assumed for devices whose driver sends no health_check_timeout_seconds; keep-alives are sent at half of it.")
            .define(POD_RESOURCES_SOCKET, Type.STRING, "/var/lib/kubelet/pod-resources/kubelet.sock", Importance.MEDIUM,
                    "The kubelet PodResources v1 socket.")
            .define(POD_RESOURCES_POLL_INTERVAL, Type.LONG, 5_000L, ConfigDef.Range.atLeast(100), Importance.MEDIUM,
                    "How often PodResources List is polled (it has no Watch).")
            .define(ALLOCATIONS_RESEND_INTERVAL, Type.LONG, 300_000L, ConfigDef.Range.atLeast(1_000), Importance.LOW,
                    "An unchanged allocation snapshot is re-sent this often.")
            .define(RECONNECT_BACKOFF_MAX, Type.LONG, 30_000L, ConfigDef.Range.atLeast(100), Importance.LOW,
                    "Upper bound of the exponential backoff between reconnects to a DRA driver.")
            .define(HEARTBEAT_INTERVAL, Type.LONG, 10_000L, ConfigDef.Range.atLeast(100), Importance.LOW,
                    "How often the node heartbeat (which sources are up) is published.");

    /** A DRA driver and the socket that serves its health stream. */
    public record DriverEndpoint(String driverName, Path socket) {}

    public CollectorConfig(Map<?, ?> values) {
        super(DEFINITION, values);
        driverEndpoints(); // validate early
    }

    public static CollectorConfig fromEnvironment(Map<String, String> env, Map<String, ?> overrides) {
        return new CollectorConfig(resolve(DEFINITION, env, overrides));
    }

    public String nodeName() {
        return getString(NODE_NAME);
    }

    public String clusterName() {
        return getString(CLUSTER_NAME);
    }

    public String bootstrapServers() {
        return getString(BOOTSTRAP_SERVERS);
    }

    public String schemaRegistryUrl() {
        return getString(SCHEMA_REGISTRY_URL);
    }

    public Topics topics() {
        return new Topics(getString(TOPIC_PREFIX));
    }

    public List<DriverEndpoint> driverEndpoints() {
        List<DriverEndpoint> endpoints = new ArrayList<>();
        for (String entry : getList(DRA_DRIVERS)) {
            int eq = entry.indexOf('=');
            if (eq <= 0 || eq == entry.length() - 1) {
                throw new ConfigException(DRA_DRIVERS, entry, "expected <driver>=<socket path>");
            }
            endpoints.add(new DriverEndpoint(entry.substring(0, eq).trim(), Path.of(entry.substring(eq + 1).trim())));
        }
        return endpoints;
    }

    public Duration defaultHealthTimeout() {
        return Duration.ofSeconds(getLong(DRA_DEFAULT_TIMEOUT));
    }

    public Path podResourcesSocket() {
        return Path.of(getString(POD_RESOURCES_SOCKET));
    }

    public Duration podResourcesPollInterval() {
        return Duration.ofMillis(getLong(POD_RESOURCES_POLL_INTERVAL));
    }

    public Duration allocationsResendInterval() {
        return Duration.ofMillis(getLong(ALLOCATIONS_RESEND_INTERVAL));
    }

    public Duration heartbeatInterval() {
        return Duration.ofMillis(getLong(HEARTBEAT_INTERVAL));
    }

    public Duration reconnectBackoffMax() {
        return Duration.ofMillis(getLong(RECONNECT_BACKOFF_MAX));
    }
}
