package io.devhealth.collector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.devhealth.collector.nvml.NvmlConfig;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.DeviceRef;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.ReportKind;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The collector as {@code devhealth collector} runs it: spool, Prometheus metrics, probes; Kafka unreachable. */
class CollectorEndpointsIT {

    @TempDir
    Path tmp;

    private static HttpResponse<String> get(int port, String path) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static DeviceHealthReport report(ReportKind kind) {
        return DeviceHealthReport.newBuilder().setNode("node-a").setSourceName("gpu.example.com")
                .setDevice(DeviceRef.newBuilder().setDriver("gpu.example.com").setPool("p").setDevice("gpu-0").build())
                .setHealth(HealthStatus.HEALTHY).setKind(kind).setObservedAt(Instant.now()).build();
    }

    @Test
    void shouldServeMetricsAndProbesAndSpoolWhileKafkaIsUnreachable() throws Exception {
        Map<String, String> settings = new HashMap<>(Map.of(
                CollectorConfig.NODE_NAME, "node-a",
                CollectorConfig.BOOTSTRAP_SERVERS, "127.0.0.1:1",
                CollectorConfig.SCHEMA_REGISTRY_URL, "mem://endpoints",
                CollectorConfig.SPOOL_DIR, tmp.resolve("spool").toString(),
                CollectorConfig.DRA_REGISTRY_DIR, tmp.resolve("registry").toString(),
                CollectorConfig.POD_RESOURCES_SOCKET, tmp.resolve("kubelet.sock").toString(),
                CollectorConfig.INVENTORY_ENABLED, "false",
                // Only the two reports below are spooled: no NVML heartbeats.
                NvmlConfig.ENABLED, "false",
                CollectorConfig.HTTP_HOST, "127.0.0.1",
                CollectorConfig.HTTP_PORT, "0"));
        settings.put(CollectorConfig.CLUSTER_NAME, "gpu-east");
        try (NodeCollector collector = NodeCollector.create(new CollectorConfig(settings), Clock.systemUTC())) {
            collector.start();
            int port = collector.httpPort().orElseThrow();
            collector.publisher().publish(report(ReportKind.CHANGE));
            collector.publisher().publish(report(ReportKind.KEEPALIVE));

            await().atMost(Duration.ofSeconds(10)).until(() -> get(port, "/readyz").statusCode() == 200);
            assertThat(get(port, "/healthz").statusCode()).isEqualTo(200);
            String metrics = get(port, "/metrics").body();
            // Every series names the collector's cluster and node, however Prometheus found the collector.
            assertThat(metrics).contains("devhealth_collector_spool_records{cluster=\"gpu-east\",node=\"node-a\"} 2.0");
            assertThat(metrics).contains("devhealth_collector_reports_total{cluster=\"gpu-east\",kind=\"change\",node=\"node-a\"} 1.0");
            assertThat(metrics).contains("devhealth_collector_reports_total{cluster=\"gpu-east\",kind=\"keepalive\",node=\"node-a\"} 1.0");
            assertThat(metrics).contains("devhealth_collector_spool_dropped_total{cluster=\"gpu-east\",node=\"node-a\",priority=\"keepalive\","
                    + "reason=\"evicted\"} 0.0");
            assertThat(metrics).contains("devhealth_collector_device_health{GPU_I_ID=\"\",UUID=\"\",cluster=\"gpu-east\",container=\"\","
                    + "device=\"gpu-0\",driver=\"gpu.example.com\",health=\"healthy\",namespace=\"\",node=\"node-a\",pod=\"\",pool=\"p\","
                    + "source=\"gpu.example.com\"} 1.0");
            assertThat(metrics).contains("devhealth_collector_spool_oldest_age_seconds");
            assertThat(metrics).contains("devhealth_collector_kafka_send_seconds");
            assertThat(get(port, "/nothing").statusCode()).isEqualTo(404);
        }
    }
}
