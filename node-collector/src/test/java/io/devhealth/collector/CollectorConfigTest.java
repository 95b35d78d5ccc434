package io.devhealth.collector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.collector.dra.HealthApiVersion;
import io.devhealth.collector.nvml.NvmlConfig;
import io.devhealth.collector.publish.KafkaReportPublisher;
import io.devhealth.collector.spool.DiskSpool;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

class CollectorConfigTest {

    private static Map<String, Object> required() {
        return new HashMap<>(Map.of(CollectorConfig.NODE_NAME, "node-a", CollectorConfig.BOOTSTRAP_SERVERS, "k:9092",
                CollectorConfig.SCHEMA_REGISTRY_URL, "mem://c"));
    }

    @Test
    void shouldParseStaticDriversWithAnOptionalApiVersion() {
        Map<String, Object> values = required();
        values.put(CollectorConfig.DRA_DRIVERS, "a.example.com=/run/a/dra.sock, b.example.com=/run/b/dra.sock@v1");

        CollectorConfig config = new CollectorConfig(values);

        assertThat(config.driverEndpoints()).containsExactly(
                new CollectorConfig.DriverEndpoint("a.example.com", Path.of("/run/a/dra.sock"), HealthApiVersion.V1ALPHA1),
                new CollectorConfig.DriverEndpoint("b.example.com", Path.of("/run/b/dra.sock"), HealthApiVersion.V1));
    }

    @Test
    void shouldRejectAnUnknownApiVersion() {
        Map<String, Object> values = required();
        values.put(CollectorConfig.DRA_DRIVERS, "a.example.com=/run/a/dra.sock@v2");

        assertThatThrownBy(() -> new CollectorConfig(values)).isInstanceOf(ConfigException.class).hasMessageContaining("v2");
    }

    @Test
    void shouldRejectAStaticDriverWhoseNameIsNoDnsSubdomain() {
        Map<String, Object> values = required();
        values.put(CollectorConfig.DRA_DRIVERS, "../csi=/run/a/dra.sock");

        assertThatThrownBy(() -> new CollectorConfig(values)).isInstanceOf(ConfigException.class).hasMessageContaining("DNS-1123 subdomain");
    }

    @Test
    void shouldRejectAnInboundLimitBeyondWhatTheHeapCanTake() {
        Map<String, Object> values = required();
        values.put(CollectorConfig.GRPC_MAX_INBOUND_MESSAGE_BYTES, Integer.toString(64 * 1024 * 1024));

        assertThatThrownBy(() -> new CollectorConfig(values)).isInstanceOf(ConfigException.class)
                .hasMessageContaining(CollectorConfig.GRPC_MAX_INBOUND_MESSAGE_BYTES);
    }

    @Test
    void shouldDocumentProductionDefaults() {
        CollectorConfig config = new CollectorConfig(required());

        assertThat(config.registryDirectory()).isEqualTo(Path.of("/var/lib/kubelet/plugins_registry"));
        assertThat(config.pluginsDirectory()).isEqualTo(Path.of("/var/lib/kubelet/plugins"));
        assertThat(config.grpcMaxInboundMessageBytes()).isEqualTo(4 * 1024 * 1024);
        assertThat(config.snapshotMaxDevices()).isEqualTo(1024);
        assertThat(config.discoveryEnabled()).isTrue();
        assertThat(config.spoolDirectory()).isEmpty();
        assertThat(config.spoolMaxBytes()).isEqualTo(256L * 1024 * 1024);
        assertThat(config.spoolFsyncInterval().toMillis()).isEqualTo(1_000);
        assertThat(config.httpPort()).isEqualTo(-1);
        assertThat(config.inventoryEnabled()).isEqualTo("auto");
    }

    @Test
    void shouldDerivePublisherSettingsFromTheCollectorOptions() {
        Map<String, Object> values = required();
        values.put(CollectorConfig.SPOOL_MAX_BYTES, "1048576");
        values.put(CollectorConfig.SPOOL_FSYNC_INTERVAL, "0");
        values.put(CollectorConfig.SPOOL_MAX_IN_FLIGHT, "7");
        values.put("kafka.security.protocol", "SSL");

        KafkaReportPublisher.Settings settings = new CollectorConfig(values).publisherSettings(Path.of("/spool"));

        assertThat(settings.sender().node()).isEqualTo("node-a");
        assertThat(settings.sender().maxInFlight()).isEqualTo(7);
        assertThat(settings.sender().signer()).isEmpty();
        assertThat(settings.spool()).isEqualTo(new DiskSpool.Settings(Path.of("/spool"), 1_048_576, Duration.ZERO));
        assertThat(settings.clientProperties()).containsEntry("bootstrap.servers", "k:9092").containsEntry("security.protocol", "SSL");
    }

    @Test
    void shouldKeepStickyFindingsUnderTheSpoolDirectoryUnlessAStateDirectoryIsSet() {
        assertThat(new CollectorConfig(required()).nvml().stateDirectory()).isNull();

        Map<String, Object> spooled = required();
        spooled.put(CollectorConfig.SPOOL_DIR, "/var/lib/devhealth/spool");
        assertThat(new CollectorConfig(spooled).nvml().stateDirectory())
                .isEqualTo(Path.of("/var/lib/devhealth/spool", NvmlConfig.DEFAULT_STATE_SUBDIRECTORY));

        spooled.put(NvmlConfig.STATE_DIR, "/var/lib/devhealth/sticky");
        assertThat(new CollectorConfig(spooled).nvml().stateDirectory()).isEqualTo(Path.of("/var/lib/devhealth/sticky"));
    }

    @Test
    void shouldTurnInventoryOnAutomaticallyOnlyWhereAKubernetesApiIsConfigured() {
        CollectorConfig auto = new CollectorConfig(required());
        assertThat(NodeCollector.inventoryWanted(auto, Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1"))).isTrue();

        Map<String, Object> off = required();
        off.put(CollectorConfig.INVENTORY_ENABLED, "false");
        assertThat(NodeCollector.inventoryWanted(new CollectorConfig(off), Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1"))).isFalse();

        Map<String, Object> master = required();
        master.put(CollectorConfig.KUBERNETES_MASTER, "https://api:6443");
        assertThat(NodeCollector.inventoryWanted(new CollectorConfig(master), Map.of())).isTrue();
    }

    @Test
    void shouldReadEveryOptionFromItsEnvironmentVariable() {
        CollectorConfig config = CollectorConfig.fromEnvironment(Map.of(
                "DEVHEALTH_NODE_NAME", "node-e", "DEVHEALTH_KAFKA_BOOTSTRAP_SERVERS", "k:9092",
                "DEVHEALTH_SCHEMA_REGISTRY_URL", "mem://e", "DEVHEALTH_SPOOL_DIR", "/var/lib/devhealth/spool",
                "DEVHEALTH_HTTP_PORT", "9102"), Map.of());

        assertThat(config.spoolDirectory()).contains(Path.of("/var/lib/devhealth/spool"));
        assertThat(config.httpPort()).isEqualTo(9102);
    }

    @Test
    void shouldFailToStartWithTheRemovedPublishLayoutVariableNamingIt() {
        Map<String, String> env = Map.of("DEVHEALTH_NODE_NAME", "node-e", "DEVHEALTH_KAFKA_BOOTSTRAP_SERVERS", "k:9092",
                "DEVHEALTH_SCHEMA_REGISTRY_URL", "mem://e", "DEVHEALTH_PUBLISH_LAYOUT", "three-topics");

        assertThatThrownBy(() -> CollectorConfig.fromEnvironment(env, Map.of())).isInstanceOf(ConfigException.class)
                .hasMessageContaining("publish.layout").hasMessageContaining("DEVHEALTH_PUBLISH_LAYOUT")
                .hasMessageContaining("no longer a setting").hasMessageContaining("node-events")
                .hasMessageContaining("Remove the setting");
    }

    @Test
    void shouldRejectTheRemovedPublishLayoutKeyWhateverItsValue() {
        for (String value : new String[] {"three-topics", "node-events"}) {
            Map<String, Object> values = required();
            values.put("publish.layout", value);

            assertThatThrownBy(() -> new CollectorConfig(values)).as(value).isInstanceOf(ConfigException.class)
                    .hasMessageContaining("publish.layout").hasMessageContaining("no longer a setting");
            assertThatThrownBy(() -> CollectorConfig.fromEnvironment(Map.of(), Map.of("publish.layout", value)))
                    .as("--set publish.layout=%s", value).isInstanceOf(ConfigException.class)
                    .hasMessageContaining("publish.layout");
        }
        assertThat(CollectorConfig.describe(CollectorConfig.DEFINITION)).doesNotContain("publish.layout", "three-topics");
    }

    private static final byte[] MASTER = "a-cluster-secret-of-at-least-32-bytes!!".getBytes(java.nio.charset.StandardCharsets.UTF_8);

    @Test
    void shouldSignOnlyWithAKeyForThisNodeFromTheEnvironmentOrAFile(@org.junit.jupiter.api.io.TempDir Path tmp) throws Exception {
        assertThat(new CollectorConfig(required()).recordSigner()).as("no key: unsigned").isEmpty();

        String credential = io.devhealth.runtime.security.NodeKeyCredential.issue(MASTER, "node-a").format();
        CollectorConfig fromEnv = CollectorConfig.fromEnvironment(Map.of("DEVHEALTH_NODE_NAME", "node-a",
                "DEVHEALTH_KAFKA_BOOTSTRAP_SERVERS", "k:9092", "DEVHEALTH_SCHEMA_REGISTRY_URL", "mem://x",
                "DEVHEALTH_NODE_KEY", credential), Map.of());
        assertThat(fromEnv.recordSigner()).hasValueSatisfying(signer -> assertThat(signer.node()).isEqualTo("node-a"));
        assertThat(fromEnv.toString()).doesNotContain(credential.substring(credential.lastIndexOf(':') + 1));

        Path file = tmp.resolve("node.key");
        java.nio.file.Files.writeString(file, credential + "\n");
        Map<String, Object> withFile = required();
        withFile.put(CollectorConfig.NODE_KEY_FILE, file.toString());
        assertThat(new CollectorConfig(withFile).recordSigner()).isPresent();

        Map<String, Object> both = new HashMap<>(withFile);
        both.put(CollectorConfig.NODE_KEY, credential);
        assertThatThrownBy(() -> new CollectorConfig(both)).isInstanceOf(ConfigException.class).hasMessageContaining("not both");

        Map<String, Object> otherNode = required();
        otherNode.put(CollectorConfig.NODE_KEY, io.devhealth.runtime.security.NodeKeyCredential.issue(MASTER, "node-b").format());
        assertThatThrownBy(() -> new CollectorConfig(otherNode)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("for node 'node-b'").hasMessageNotContaining(credential.substring(credential.lastIndexOf(':') + 1));

        Map<String, Object> missing = required();
        missing.put(CollectorConfig.NODE_KEY_FILE, tmp.resolve("absent").toString());
        assertThatThrownBy(() -> new CollectorConfig(missing)).isInstanceOf(ConfigException.class).hasMessageContaining("cannot read");
    }
}
