package io.devhealth.sink;

import io.devhealth.schema.Topics;
import io.devhealth.schema.config.ServiceConfig;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;

/** Typed configuration of the sink-apiserver; every option is also an environment variable ({@link ServiceConfig#envName}). */
public final class SinkConfig extends ServiceConfig {

    public static final String BOOTSTRAP_SERVERS = "kafka.bootstrap.servers";
    public static final String SCHEMA_REGISTRY_URL = "schema.registry.url";
    public static final String TOPIC_PREFIX = "topic.prefix";
    public static final String GROUP_ID = "group.id";
    public static final String MODE = "mode";
    public static final String KUBERNETES_MASTER = "kubernetes.master";
    public static final String FIELD_MANAGER = "field.manager";

    /** Which pods get which fields. */
    public enum Mode {
        /** Terminated containers get allocatedResourcesStatus (the kubelet never updates them); every affected pod gets the condition. */
        TERMINATED,
        /** Live containers too, for clusters where the kubelet does not write the field. */
        ALL,
        /** Only the pod condition. */
        CONDITIONS_ONLY;

        static Mode parse(String value) {
            return Mode.valueOf(value.toUpperCase(Locale.ROOT).replace('-', '_'));
        }
    }

    public static final ConfigDef DEFINITION = new ConfigDef()
            .define(BOOTSTRAP_SERVERS, Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new ConfigDef.NonEmptyString(), Importance.HIGH,
                    "Kafka bootstrap servers.")
            .define(SCHEMA_REGISTRY_URL, Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new ConfigDef.NonEmptyString(), Importance.HIGH,
                    "Confluent-compatible schema registry URL; mem://<name> for the embedded demo.")
            .define(TOPIC_PREFIX, Type.STRING, Topics.DEFAULT_PREFIX, Importance.MEDIUM, "Prefix of every topic name.")
            .define(GROUP_ID, Type.STRING, "devhealth-sink", new ConfigDef.NonEmptyString(), Importance.MEDIUM,
                    "Consumer group of the sink.")
            .define(MODE, Type.STRING, "terminated", ConfigDef.ValidString.in("terminated", "all", "conditions-only"), Importance.HIGH,
                    "terminated: allocatedResourcesStatus for terminated containers, the condition for every pod; "
                            + "all: live containers too (the kubelet does not write the field); conditions-only: only the condition.")
            .define(KUBERNETES_MASTER, Type.STRING, "", Importance.MEDIUM,
                    "API server URL; empty means in-cluster service account or ~/.kube/config.")
            .define(FIELD_MANAGER, Type.STRING, "devhealth-sink", Importance.LOW,
                    "Name recorded as the writer of the fields the sink changes.");

    public SinkConfig(Map<?, ?> values) {
        super(DEFINITION, values);
    }

    public static SinkConfig fromEnvironment(Map<String, String> env, Map<String, ?> overrides) {
        return new SinkConfig(resolve(DEFINITION, env, overrides));
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

    public String groupId() {
        return getString(GROUP_ID);
    }

    public Mode mode() {
        return Mode.parse(getString(MODE));
    }

    public String kubernetesMaster() {
        return getString(KUBERNETES_MASTER);
    }

    public String fieldManager() {
        return getString(FIELD_MANAGER);
    }
}
