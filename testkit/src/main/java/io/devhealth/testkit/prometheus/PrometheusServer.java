package io.devhealth.testkit.prometheus;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.devhealth.simulators.process.ManagedProcess;
import io.devhealth.simulators.process.Ports;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real Prometheus server for one test: started on 127.0.0.1 on a free port with its storage in the
 * test's directory, scraping the given targets and evaluating the given rule files at one short
 * interval, and asked through its HTTP API ({@code /api/v1/query}, {@code /api/v1/alerts},
 * {@code /api/v1/targets}, {@code /api/v1/rules}). Its log is kept under {@code target/prometheus/}.
 */
public final class PrometheusServer implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(PrometheusServer.class);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final ManagedProcess process;
    private final URI url;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(REQUEST_TIMEOUT).build();

    private PrometheusServer(ManagedProcess process, URI url) {
        this.process = process;
        this.url = url;
    }

    /**
     * Starts Prometheus and waits until it is ready.
     *
     * @param workDir the test's own directory: configuration and storage go there
     * @param targets {@code host:port} to scrape ({@code /metrics}), by job name
     * @param ruleFiles rule files to evaluate
     * @param interval scrape and rule evaluation interval
     */
    public static PrometheusServer start(PrometheusBinaries binaries, Path workDir, Map<String, List<String>> targets,
                                         List<Path> ruleFiles, Duration interval) {
        int port = Ports.free();
        Path config = workDir.resolve("prometheus.yml");
        try {
            Files.createDirectories(workDir);
            // Prometheus reads YAML, of which JSON is a part: the configuration is built as a tree, not as text.
            Files.writeString(config, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(configuration(targets, ruleFiles, interval)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        ManagedProcess process = ManagedProcess.start("prometheus-" + port, List.of(binaries.prometheus().toString(),
                        "--config.file=" + config.toAbsolutePath(),
                        "--storage.tsdb.path=" + workDir.resolve("data").toAbsolutePath(),
                        "--storage.tsdb.retention.time=1h",
                        "--web.listen-address=127.0.0.1:" + port,
                        "--log.level=warn"),
                Path.of("target", "prometheus", "prometheus-" + port + ".log").toAbsolutePath(), workDir.resolve("cwd"));
        PrometheusServer server = new PrometheusServer(process, URI.create("http://127.0.0.1:" + port));
        try {
            server.awaitReady();
        } catch (RuntimeException | Error e) {
            process.close();
            throw e;
        }
        LOGGER.info("prometheus started url={} jobs={} ruleFiles={} interval={}", server.url, targets.keySet(), ruleFiles.size(), interval);
        return server;
    }

    private static ObjectNode configuration(Map<String, List<String>> targets, List<Path> ruleFiles, Duration interval) {
        ObjectNode root = JSON.createObjectNode();
        String every = interval.toMillis() + "ms";
        root.putObject("global").put("scrape_interval", every).put("scrape_timeout", every).put("evaluation_interval", every);
        ArrayNode rules = root.putArray("rule_files");
        ruleFiles.forEach(file -> rules.add(file.toAbsolutePath().toString()));
        ArrayNode scrapes = root.putArray("scrape_configs");
        targets.forEach((job, addresses) -> {
            ObjectNode scrape = scrapes.addObject().put("job_name", job).put("metrics_path", "/metrics");
            ArrayNode hosts = scrape.putArray("static_configs").addObject().putArray("targets");
            addresses.forEach(hosts::add);
        });
        return root;
    }

    private void awaitReady() {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (true) {
            process.requireAlive();
            try {
                if (get("/-/ready").statusCode() == 200) {
                    return;
                }
            } catch (UncheckedIOException e) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("prometheus not ready within " + START_TIMEOUT + "; the end of " + process.log() + ":\n"
                        + process.tail(40));
            }
            sleep(Duration.ofMillis(200));
        }
    }

    public URI url() {
        return url;
    }

    /**
     * Evaluates {@code promql} now ({@code /api/v1/query}); the result's {@code data.result}, an array of
     * series for an instant vector. Fails with Prometheus' error for a query it refuses.
     */
    public JsonNode query(String promql) {
        return data("/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8), "query " + promql).path("result");
    }

    /** The alerts pending or firing now ({@code /api/v1/alerts}), each with its labels, state and annotations. */
    public List<JsonNode> alerts() {
        List<JsonNode> alerts = new ArrayList<>();
        data("/api/v1/alerts", "alerts").path("alerts").forEach(alerts::add);
        return alerts;
    }

    /** The scrape targets ({@code /api/v1/targets} {@code activeTargets}), each with its job, health and last error. */
    public List<JsonNode> targets() {
        List<JsonNode> targets = new ArrayList<>();
        data("/api/v1/targets", "targets").path("activeTargets").forEach(targets::add);
        return targets;
    }

    /** The rule groups loaded ({@code /api/v1/rules}), each rule with its health and last error. */
    public List<JsonNode> ruleGroups() {
        List<JsonNode> groups = new ArrayList<>();
        data("/api/v1/rules", "rules").path("groups").forEach(groups::add);
        return groups;
    }

    private JsonNode data(String pathAndQuery, String what) {
        process.requireAlive();
        HttpResponse<String> response = get(pathAndQuery);
        JsonNode body;
        try {
            body = JSON.readTree(response.body());
        } catch (IOException e) {
            throw new IllegalStateException("prometheus answered " + what + " with " + response.statusCode() + " and no JSON: "
                    + response.body(), e);
        }
        if (!"success".equals(body.path("status").asText())) {
            throw new IllegalArgumentException("prometheus refused " + what + ": " + body.path("errorType").asText() + ": "
                    + body.path("error").asText());
        }
        return body.path("data");
    }

    private HttpResponse<String> get(String pathAndQuery) {
        try {
            return http.send(HttpRequest.newBuilder(url.resolve(pathAndQuery)).timeout(REQUEST_TIMEOUT).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted asking prometheus", e);
        }
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Stops Prometheus (SIGTERM, then SIGKILL); its storage stays in the test's directory. */
    @Override
    public void close() {
        process.close();
    }
}
