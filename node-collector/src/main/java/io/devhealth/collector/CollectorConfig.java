package io.devhealth.collector;

import io.devhealth.collector.dra.HealthApiVersion;
import io.devhealth.collector.nvml.NvmlConfig;
import io.devhealth.collector.publish.KafkaReportPublisher;
import io.devhealth.collector.publish.KafkaSpoolSender;
import io.devhealth.collector.spool.DiskSpool;
import io.devhealth.runtime.config.ServiceConfig;
import io.devhealth.runtime.security.NodeKeyCredential;
import io.devhealth.runtime.security.RecordSigner;
import io.devhealth.schema.DriverNames;
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

/** Typed configuration of the node-collector; every option is also an environment variable ({@link ServiceConfig#envName}). */
public final class CollectorConfig extends ServiceConfig {

    public static final String NODE_NAME = "node.name";
    public static final String CLUSTER_NAME = "cluster.name";
    public static final String DRA_DRIVERS = "dra.drivers";
    public static final String DRA_DEFAULT_TIMEOUT = "dra.default.timeout.seconds";
    public static final String POD_RESOURCES_SOCKET = "podresources.socket";
    public static final String POD_RESOURCES_POLL_INTERVAL = "podresources.poll.interval.ms";
    public static final String ALLOCATIONS_RESEND_INTERVAL = "allocations.resend.interval.ms";
    public static final String RECONNECT_BACKOFF_MAX = "reconnect.backoff.max.ms";
    public static final String HEARTBEAT_INTERVAL = "heartbeat.interval.ms";
    public static final String DRA_DISCOVERY_ENABLED = "dra.discovery.enabled";
    public static final String DRA_REGISTRY_DIR = "dra.registry.dir";
    public static final String DRA_REGISTRY_RESCAN_INTERVAL = "dra.registry.rescan.interval.ms";
    public static final String DRA_GETINFO_TIMEOUT = "dra.registry.getinfo.timeout.ms";
    public static final String DRA_PLUGINS_DIR = "dra.plugins.dir";
    public static final String DRA_SNAPSHOT_MAX_DEVICES = "dra.snapshot.max.devices";
    public static final String GRPC_MAX_INBOUND_MESSAGE_BYTES = "grpc.max.inbound.message.bytes";
    public static final String SPOOL_DIR = "spool.dir";
    public static final String SPOOL_MAX_BYTES = "spool.max.bytes";
    public static final String SPOOL_FSYNC_INTERVAL = "spool.fsync.interval.ms";
    public static final String SPOOL_MAX_IN_FLIGHT = "spool.send.max.in.flight";
    public static final String INVENTORY_ENABLED = "inventory.enabled";
    public static final String INVENTORY_RESEND_INTERVAL = "inventory.resend.interval.ms";
    public static final String TAINTS_ENABLED = "taints.enabled";
    public static final String TAINTS_POLICY_FILE = "taints.policy.file";
    public static final String TAINTS_TIMEOUT = "taints.timeout.ms";
    public static final String KUBERNETES_MASTER = "kubernetes.master";
    public static final String HTTP_HOST = "http.host";
    public static final String HTTP_PORT = "http.port";
    public static final String NODE_KEY = "node.key";
    public static final String NODE_KEY_FILE = "node.key.file";

    /** Every collector option, the NVML source's ({@link NvmlConfig}) included. */
    public static final ConfigDef DEFINITION = NvmlConfig.define(pipelineOptions()
            .define(NODE_NAME, Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new ConfigDef.NonEmptyString(), Importance.HIGH,
                    "Name of the Kubernetes node this collector runs on (the downward API's spec.nodeName). Key of every record it writes.")
            .define(CLUSTER_NAME, Type.STRING, "", Importance.MEDIUM, "Cluster name stamped on every record, for fleets of several clusters.")
            .define(DRA_DRIVERS, Type.LIST, "", Importance.HIGH,
                    "Statically configured DRA drivers as <driver>=<service socket path>[@v1|@v1alpha1], comma separated "
                            + "(default API v1alpha1, the one released kubelets speak). A discovered registration of the same "
                            + "driver supersedes the static one.")
            .define(DRA_DISCOVERY_ENABLED, Type.BOOLEAN, true, Importance.HIGH,
                    "Discover DRA drivers from the kubelet plugin registry (Registration.GetInfo on every *-reg.sock; read-only).")
            .define(DRA_REGISTRY_DIR, Type.STRING, "/var/lib/kubelet/plugins_registry", Importance.MEDIUM,
                    "The kubelet plugin registry directory (hostPath mount). It may appear after the collector starts.")
            .define(DRA_REGISTRY_RESCAN_INTERVAL, Type.LONG, 10_000L, ConfigDef.Range.atLeast(100), Importance.LOW,
                    "Periodic rescan of the plugin registry, besides inotify (which can miss events on a hostPath); "
                            + "also the retry interval of registration sockets that did not answer GetInfo.")
            .define(DRA_GETINFO_TIMEOUT, Type.LONG, 5_000L, ConfigDef.Range.atLeast(100), Importance.LOW,
                    "Deadline of one Registration.GetInfo call; a hanging driver is asked again at the next rescan.")
            .define(DRA_PLUGINS_DIR, Type.STRING, "/var/lib/kubelet/plugins", new ConfigDef.NonEmptyString(), Importance.MEDIUM,
                    "The kubelet's plugins directory, as mounted in the collector (same path as on the host). A discovered "
                            + "driver's endpoint must lie below <this>/<driver name>/, where the kubeletplugin library puts it; "
                            + "other registrations are refused (counted in devhealth_collector_dra_registrations_refused_total). "
                            + "Static drivers (" + DRA_DRIVERS + ") are not checked.")
            .define(DRA_SNAPSHOT_MAX_DEVICES, Type.INT, 1024, ConfigDef.Range.between(1, 100_000), Importance.LOW,
                    "Most devices in one DRA health snapshot. A larger snapshot is refused whole before it is parsed, the "
                            + "stream reconnects and the driver's source is down until a snapshot passes (counted in "
                            + "devhealth_collector_dra_snapshots_refused_total). A ResourceSlice holds at most 128 devices; "
                            + "8 GPUs with every MIG placement advertised are under 200.")
            .define(GRPC_MAX_INBOUND_MESSAGE_BYTES, Type.INT, 4 * 1024 * 1024, ConfigDef.Range.between(64 * 1024, 16 * 1024 * 1024),
                    Importance.LOW,
                    "Largest message read on any gRPC channel the collector opens (DRA health streams, plugin registration, "
                            + "kubelet PodResources). gRPC's own default, some twice the largest legitimate message: a snapshot "
                            + "of 1024 devices with 1 KiB messages is ~1.4 MiB, a PodResources List of 500 pods with devices "
                            + "~2 MiB. A larger message fails its call (a DRA stream reconnects, a poll is skipped) without "
                            + "being buffered.")
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
                    "How often the node heartbeat (which sources are up) is published.")
            .define(SPOOL_DIR, Type.STRING, "", Importance.HIGH,
                    "Directory of the disk spool every record passes through before Kafka (a hostPath in a DaemonSet, e.g. "
                            + "/var/lib/devhealth/spool, so it outlives the pod). Empty: a temporary directory deleted at shutdown, "
                            + "which does NOT survive a restart (a warning is logged); for the embedded demo and tests only.")
            .define(SPOOL_MAX_BYTES, Type.LONG, DiskSpool.Settings.DEFAULT_MAX_BYTES, ConfigDef.Range.atLeast(64 * 1024), Importance.MEDIUM,
                    "Disk budget of the spool's records. When full, the oldest unsent keep-alives are evicted first; other records "
                            + "are rejected only when no keep-alive is left. Every drop is counted (devhealth_collector_spool_dropped_total).")
            .define(SPOOL_FSYNC_INTERVAL, Type.LONG, DiskSpool.Settings.DEFAULT_FSYNC_INTERVAL.toMillis(), ConfigDef.Range.atLeast(0), Importance.MEDIUM,
                    "How often the spool's write-ahead log is fsynced. Accepted records survive a crash or kill -9 of the "
                            + "collector regardless; this bounds what a crash of the whole node can lose. 0 = fsync every record.")
            .define(SPOOL_MAX_IN_FLIGHT, Type.INT, KafkaSpoolSender.Settings.DEFAULT_MAX_IN_FLIGHT, ConfigDef.Range.between(1, 100_000), Importance.LOW,
                    "Most records handed to the Kafka producer and not yet acknowledged.")
            .define(INVENTORY_ENABLED, Type.STRING, "auto", ConfigDef.ValidString.in("auto", "true", "false"), Importance.MEDIUM,
                    "Publish the node's devices from its ResourceSlices (resource.k8s.io/v1) as NodeDevices. auto: on when a "
                            + "Kubernetes API is configured (in-cluster service account, KUBECONFIG or ~/.kube/config, or kubernetes.master).")
            .define(INVENTORY_RESEND_INTERVAL, Type.LONG, 600_000L, ConfigDef.Range.atLeast(1_000), Importance.LOW,
                    "An unchanged inventory is re-sent this often.")
            .define(TAINTS_ENABLED, Type.BOOLEAN, true, Importance.MEDIUM,
                    "Report the device taints of the node's ResourceSlices and the DeviceTaintRules that select its devices "
                            + "as health source TAINT (NVIDIA's DRA driver reports GPU health only this way). Needs the inventory.")
            .define(TAINTS_POLICY_FILE, Type.STRING, "", Importance.LOW,
                    "JSON file of taint rules tried before the shipped ones (default-taint-policy.json); empty: the shipped rules only.")
            .define(TAINTS_TIMEOUT, Type.LONG, 30_000L, ConfigDef.Range.atLeast(3_000), Importance.LOW,
                    "Timeout announced with each taint report; every device's taint state is re-stated every third of it.")
            .define(KUBERNETES_MASTER, Type.STRING, "", Importance.LOW,
                    "Kubernetes API URL; empty: fabric8 auto-configuration (in-cluster service account or kubeconfig).")
            .define(HTTP_HOST, Type.STRING, "0.0.0.0", Importance.LOW, "Address of the /metrics, /healthz and /readyz endpoint.")
            .define(HTTP_PORT, Type.INT, -1, ConfigDef.Range.between(-1, 65_535), Importance.MEDIUM,
                    "Port of the /metrics, /healthz and /readyz endpoint; -1 = no endpoint, 0 = any free port. "
                            + "A DaemonSet sets one (e.g. 9102); the default is off so several collectors can share one JVM (demo).")
            .define(NODE_KEY, Type.PASSWORD, null, Importance.HIGH,
                    "This node's signing key, as `devhealth node-key` prints it (v1:<key id>:<node>:<key>), from a per-node "
                            + "Secret. Every record is then signed (HMAC-SHA256 over node, topic and value) so that a processor "
                            + "with principals.enforce accepts it as this node's. Empty: records are only stamped with the node. "
                            + "See docs/SECURITY.md.")
            .define(NODE_KEY_FILE, Type.STRING, "", Importance.HIGH,
                    "File holding " + NODE_KEY + " (a mounted Secret or one an init container wrote); read at start. "
                            + "Set this or " + NODE_KEY + ", not both."));

    /** Settings the collector no longer has: starting with one fails, naming it. */
    public static final List<RemovedOption> REMOVED = List.of(
            new RemovedOption("publish.layout", "the three-topics layout is gone; the collector writes every record "
                    + "as a NodeEvent to <topic.prefix>node-events. Remove the setting."));

    /**
     * The NVML source's settings (nvml.*). Without {@value NvmlConfig#STATE_DIR}, sticky findings are
     * kept in {@code <spool.dir>/}{@value NvmlConfig#DEFAULT_STATE_SUBDIRECTORY} when a spool directory is set.
     */
    public NvmlConfig nvml() {
        NvmlConfig nvml = NvmlConfig.from(this);
        if (nvml.stateDirectory() == null && spoolDirectory().isPresent()) {
            // On the spool's hostPath: it outlives the pod, which is the point of keeping sticky findings.
            return nvml.toBuilder().stateDirectory(spoolDirectory().get().resolve(NvmlConfig.DEFAULT_STATE_SUBDIRECTORY)).build();
        }
        return nvml;
    }

    /** A statically configured DRA driver, the socket that serves its health stream, and the API version it speaks. */
    public record DriverEndpoint(String driverName, Path socket, HealthApiVersion version) {}

    public CollectorConfig(Map<?, ?> values) {
        super(DEFINITION, values, REMOVED);
        driverEndpoints(); // validate early
        recordSigner();
    }

    public static CollectorConfig fromEnvironment(Map<String, String> env, Map<String, ?> overrides) {
        return new CollectorConfig(resolve(DEFINITION, REMOVED, env, overrides));
    }

    public String nodeName() {
        return getString(NODE_NAME);
    }

    public String clusterName() {
        return getString(CLUSTER_NAME);
    }

    /**
     * The signer of this node's records, when a node key is configured ({@value #NODE_KEY} or
     * {@value #NODE_KEY_FILE}).
     *
     * @throws ConfigException when both are set, the file cannot be read, the key does not parse, or
     *                         it is another node's key (the processor would dead-letter every record)
     */
    public Optional<RecordSigner> recordSigner() {
        Password inline = getPassword(NODE_KEY);
        String file = getString(NODE_KEY_FILE).strip();
        boolean hasInline = inline != null && !inline.value().isBlank();
        if (hasInline && !file.isEmpty()) {
            throw new ConfigException(NODE_KEY_FILE, file, "set " + NODE_KEY + " or " + NODE_KEY_FILE + ", not both");
        }
        String text;
        String option;
        if (hasInline) {
            text = inline.value();
            option = NODE_KEY;
        } else if (!file.isEmpty()) {
            try {
                text = Files.readString(Path.of(file), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new ConfigException(NODE_KEY_FILE, file, "cannot read the node key: " + e.getClass().getSimpleName());
            }
            option = NODE_KEY_FILE;
        } else {
            return Optional.empty();
        }
        NodeKeyCredential credential;
        try {
            credential = NodeKeyCredential.parse(text);
        } catch (IllegalArgumentException e) {
            // The message never quotes the key; the value shown is the option's masked form.
            throw new ConfigException(option, hasInline ? inline : file, e.getMessage());
        }
        if (!credential.node().equals(nodeName())) {
            throw new ConfigException(option, hasInline ? inline : file, "the node key is for node '" + credential.node()
                    + "', this collector runs on node '" + nodeName() + "'");
        }
        return Optional.of(new RecordSigner(credential));
    }

    /**
     * The publishing path's settings: node, topics, the {@code kafka.*} client properties with
     * {@value #BOOTSTRAP_SERVERS}, the spool options and the node key.
     *
     * @param spoolDirectory {@link #spoolDirectory()}, or the temporary directory used when it is empty
     */
    public KafkaReportPublisher.Settings publisherSettings(Path spoolDirectory) {
        Map<String, Object> client = kafkaClientProperties();
        client.put("bootstrap.servers", bootstrapServers());
        return KafkaReportPublisher.Settings.builder(nodeName(), topics(), spoolDirectory)
                .clientProperties(client)
                .spoolMaxBytes(spoolMaxBytes())
                .spoolFsyncInterval(spoolFsyncInterval())
                .maxInFlight(spoolMaxInFlight())
                .signer(recordSigner())
                .autoRegisterSchemas(autoRegisterSchemas())
                .build();
    }

    public List<DriverEndpoint> driverEndpoints() {
        List<DriverEndpoint> endpoints = new ArrayList<>();
        for (String entry : getList(DRA_DRIVERS)) {
            int eq = entry.indexOf('=');
            if (eq <= 0 || eq == entry.length() - 1) {
                throw new ConfigException(DRA_DRIVERS, entry, "expected <driver>=<socket path>");
            }
            String target = entry.substring(eq + 1).trim();
            HealthApiVersion version = HealthApiVersion.V1ALPHA1;
            int at = target.lastIndexOf('@');
            if (at > 0) {
                String suffix = target.substring(at + 1);
                version = switch (suffix) {
                    case "v1" -> HealthApiVersion.V1;
                    case "v1alpha1" -> HealthApiVersion.V1ALPHA1;
                    default -> throw new ConfigException(DRA_DRIVERS, entry, "unknown health API version '" + suffix + "'");
                };
                target = target.substring(0, at);
            }
            String driver = entry.substring(0, eq).trim();
            Optional<String> badName = DriverNames.violation(driver);
            if (badName.isPresent()) {
                throw new ConfigException(DRA_DRIVERS, entry, badName.get());
            }
            endpoints.add(new DriverEndpoint(driver, Path.of(target), version));
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

    public boolean discoveryEnabled() {
        return getBoolean(DRA_DISCOVERY_ENABLED);
    }

    public Path registryDirectory() {
        return Path.of(getString(DRA_REGISTRY_DIR));
    }

    public Duration registryRescanInterval() {
        return Duration.ofMillis(getLong(DRA_REGISTRY_RESCAN_INTERVAL));
    }

    public Path pluginsDirectory() {
        return Path.of(getString(DRA_PLUGINS_DIR));
    }

    public int snapshotMaxDevices() {
        return getInt(DRA_SNAPSHOT_MAX_DEVICES);
    }

    public int grpcMaxInboundMessageBytes() {
        return getInt(GRPC_MAX_INBOUND_MESSAGE_BYTES);
    }

    public Duration getInfoTimeout() {
        return Duration.ofMillis(getLong(DRA_GETINFO_TIMEOUT));
    }

    /** The spool directory, or empty for a temporary one. */
    public Optional<Path> spoolDirectory() {
        String dir = getString(SPOOL_DIR);
        return dir.isBlank() ? Optional.empty() : Optional.of(Path.of(dir));
    }

    public long spoolMaxBytes() {
        return getLong(SPOOL_MAX_BYTES);
    }

    public Duration spoolFsyncInterval() {
        return Duration.ofMillis(getLong(SPOOL_FSYNC_INTERVAL));
    }

    public int spoolMaxInFlight() {
        return getInt(SPOOL_MAX_IN_FLIGHT);
    }

    /** "auto", "true" or "false". */
    public String inventoryEnabled() {
        return getString(INVENTORY_ENABLED);
    }

    public Duration inventoryResendInterval() {
        return Duration.ofMillis(getLong(INVENTORY_RESEND_INTERVAL));
    }

    public boolean taintsEnabled() {
        return getBoolean(TAINTS_ENABLED);
    }

    public Optional<Path> taintsPolicyFile() {
        String file = getString(TAINTS_POLICY_FILE);
        return file.isBlank() ? Optional.empty() : Optional.of(Path.of(file));
    }

    public Duration taintsTimeout() {
        return Duration.ofMillis(getLong(TAINTS_TIMEOUT));
    }

    public Optional<String> kubernetesMaster() {
        String master = getString(KUBERNETES_MASTER);
        return master.isBlank() ? Optional.empty() : Optional.of(master);
    }

    public String httpHost() {
        return getString(HTTP_HOST);
    }

    /** -1 when the endpoint is off. */
    public int httpPort() {
        return getInt(HTTP_PORT);
    }
}
