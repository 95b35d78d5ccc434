package io.devhealth.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.devhealth.simulators.dra.DeviceState;
import io.devhealth.testkit.prometheus.PrometheusBinaries;
import io.devhealth.testkit.prometheus.PrometheusServer;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.net.URI;
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
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * The dashboard and the alert rules as an operator imports them, against a real Prometheus (Debian's
 * package {@code prometheus}, started by the test on loopback) scraping every service of the embedded
 * pipeline once a second, while a GPU under a batch job fails, a DRA driver goes silent and bad
 * records reach the processor and the sink: every dashboard expression (and variable) and every
 * alert expression returns series, a dashboard panel naming a metric nobody exports fails the test by
 * name, and the device alerts fire for the failed and the silent devices and resolve after recovery.
 *
 * <p>The rule file is the shipped one with every {@code for:} shortened to {@value #FOR} (a test cannot
 * wait the minutes an operator wants); the expressions are exactly as shipped.
 */
class ObservabilityIT {

    private static final Path MONITORING = Path.of("..", "k8s", "base", "monitoring");
    private static final String FOR = "2s";
    /** 8 devices: the small end of docs/OBSERVABILITY.md's scrape figures, which this test logs. */
    private static final int NODES = 2;
    private static final int DEVICES_PER_NODE = 4;
    private static final Duration SCRAPE = Duration.ofSeconds(1);
    /** Generous: the pipeline shares 2 cores with the build; the silent driver's devices alone take their 30 s timeout. */
    private static final Duration WAIT = Duration.ofSeconds(150);
    private static final Pattern FOR_LINE = Pattern.compile("(?m)^(\\s+for:\\s*)\\S+$");
    /** A comparison with a number, the shape every alert ends in. */
    private static final Pattern COMPARISON = Pattern.compile("(==|!=|>=|<=|>|<)\\s*(?=-?[0-9])");
    private static final Pattern LABEL_VALUES = Pattern.compile("^label_values\\((.+),\\s*(\\w+)\\)$");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Logger LOGGER = LoggerFactory.getLogger(ObservabilityIT.class);

    @TempDir
    Path tmp;

    private EmbeddedPipeline pipeline;
    private PrometheusServer prometheus;

    @BeforeEach
    void start() throws IOException {
        PrometheusBinaries binaries = PrometheusBinaries.find();
        pipeline = EmbeddedPipeline.start(EmbeddedPipeline.Options.builder(tmp.resolve("pipeline")).nodes(NODES)
                .devicesPerNode(DEVICES_PER_NODE).partitions(2).build());
        Path rules = tmp.resolve("devhealth-rules.yaml");
        Files.writeString(rules, FOR_LINE.matcher(Files.readString(MONITORING.resolve("devhealth-rules.yaml"))).replaceAll("$1" + FOR));
        prometheus = PrometheusServer.start(binaries, tmp.resolve("prometheus"), pipeline.metricsTargets(), List.of(rules), SCRAPE);
    }

    @AfterEach
    void stop() {
        if (prometheus != null) {
            prometheus.close();
        }
        if (pipeline != null) {
            pipeline.close();
        }
    }

    @Test
    void shouldShowEveryDashboardPanelAndFireTheDeviceAlertsWhileAGpuFailsAndADriverGoesSilent() throws IOException {
        EmbeddedPipeline.SimulatedNode failing = pipeline.node("node-1");
        EmbeddedPipeline.SimulatedNode silent = pipeline.node("node-2");
        BatchJob job = BatchJob.onDevice("ml", "train-observed", failing.name(), EmbeddedPipeline.SimulatedNode.device(1));
        job.schedule(pipeline.kubernetes(), failing.kubelet());
        await("every service scraped").atMost(WAIT).untilAsserted(() -> assertThat(prometheus.targets())
                .hasSize(pipeline.metricsTargets().values().stream().mapToInt(List::size).sum())
                .allSatisfy(target -> assertThat(target.path("health").asText()).as(target.toString()).isEqualTo("up")));
        await("the job's device Healthy in its pod").atMost(WAIT)
                .until(() -> job.conditionHealth(pipeline.kubernetes()).equals(Optional.of("Healthy")));

        List<DeviceState> oneFailed = new ArrayList<>(EmbeddedPipeline.allHealthy(failing.pool(), DEVICES_PER_NODE));
        oneFailed.set(1, DeviceState.unhealthy(failing.pool(), job.device(), "XID 79: GPU has fallen off the bus"));
        failing.driver().report(oneFailed);
        silent.silence();
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(pipeline.kafkaClientProperties(), new StringSerializer(),
                new ByteArraySerializer())) {
            // One undecodable record for each stage, after their counters were scraped at 0: the first
            // dead letter is then an increase, and fires the alert.
            String nodeEvents = "devhealth_processor_dead_letters_total{kind=\"deserialization\",topic=\"" + pipeline.topics().nodeEvents()
                    + "\"} == 0";
            await("the processor's dead-letter count scraped at 0").atMost(WAIT).until(() -> !prometheus.query(nodeEvents).isEmpty());
            sendGarbage(producer, pipeline.topics().nodeEvents(), failing.name());
            sendGarbage(producer, pipeline.topics().podDeviceStatus(), job.namespace() + "/" + job.name());
        }

        await("the failed GPU's alert, naming its pod").atMost(WAIT).untilAsserted(() -> assertThat(firing("DevhealthDeviceUnhealthy"))
                .singleElement().satisfies(labels -> assertThat(labels).containsEntry("node", failing.name())
                        .containsEntry("driver", EmbeddedPipeline.DRIVER).containsEntry("device", job.device())
                        .containsEntry("namespace", job.namespace()).containsEntry("pod", job.name())
                        .containsEntry("container", job.container()).containsEntry("severity", "critical")));
        List<String> silentDevices = IntStream.range(0, DEVICES_PER_NODE)
                .mapToObj(i -> silent.name() + "/" + EmbeddedPipeline.SimulatedNode.device(i)).toList();
        await("the silent driver's devices Unknown").atMost(WAIT).untilAsserted(() -> assertThat(firing("DevhealthDeviceUnknown"))
                .extracting(labels -> labels.get("node") + "/" + labels.get("device"))
                .containsExactlyInAnyOrderElementsOf(silentDevices));
        await("dead letters of both stages").atMost(WAIT).untilAsserted(() -> {
            // The record on pod-device-status is refused by both its readers: the sink, and the processor's pod claims.
            assertThat(firing("DevhealthProcessorDeadLetters")).extracting(labels -> labels.get("kind") + " " + labels.get("topic"))
                    .containsExactlyInAnyOrder("deserialization " + pipeline.topics().nodeEvents(),
                            "deserialization " + pipeline.topics().podDeviceStatus());
            assertThat(firing("DevhealthSinkDeadLetters")).extracting(labels -> labels.get("reason")).containsExactly("undecodable");
        });

        List<Expression> dashboard = dashboardExpressions();
        List<Expression> alerts = alertSignals();
        assertThat(dashboard).hasSizeGreaterThan(15);
        await("every dashboard and alert expression returns series").atMost(WAIT).untilAsserted(() -> {
            List<String> empty = new ArrayList<>();
            for (Expression expression : concat(dashboard, alerts)) {
                try {
                    if (prometheus.query(expression.promql()).isEmpty()) {
                        empty.add(expression.where() + ": no series for " + expression.promql());
                    }
                } catch (IllegalArgumentException e) {
                    empty.add(expression.where() + ": " + e.getMessage());
                }
            }
            assertThat(empty).as("expressions naming metrics nobody exports, or refused").isEmpty();
        });

        logScrapeCost();
        failing.driver().report(EmbeddedPipeline.allHealthy(failing.pool(), DEVICES_PER_NODE));
        silent.resume();
        await("the device alerts resolved").atMost(WAIT).untilAsserted(() -> {
            assertThat(firingOrPending("DevhealthDeviceUnhealthy")).isEmpty();
            assertThat(firingOrPending("DevhealthDeviceUnknown")).isEmpty();
        });
        assertThat(job.conditionHealth(pipeline.kubernetes())).contains("Healthy");
    }

    /**
     * What a scrape of each service costs at this pipeline's size, as Prometheus measured it (samples,
     * seconds) and as one more GET of /metrics reads it (bytes): the small end of docs/OBSERVABILITY.md's
     * figures. Logged, not asserted: the machine's load decides the seconds.
     */
    private void logScrapeCost() {
        for (JsonNode sample : prometheus.query("scrape_samples_scraped")) {
            String job = sample.path("metric").path("job").asText();
            String instance = sample.path("metric").path("instance").asText();
            JsonNode duration = prometheus.query("scrape_duration_seconds{instance=\"" + instance + "\"}");
            JsonNode durationMax = prometheus.query("max_over_time(scrape_duration_seconds{instance=\"" + instance + "\"}[1m])");
            LOGGER.info("scrape cost job={} instance={} pipelineDevices={} samples={} seconds={} maxSecondsLastMinute={} bytes={}", job,
                    instance, NODES * DEVICES_PER_NODE, sample.path("value").get(1).asText(), duration.path(0).path("value").get(1).asText(),
                    durationMax.path(0).path("value").get(1).asText(), metricsBytes(instance));
        }
    }

    private static int metricsBytes(String instance) {
        try {
            return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://" + instance + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofByteArray()).body().length;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void sendGarbage(KafkaProducer<String, byte[]> producer, String topic, String key) {
        try {
            producer.send(new ProducerRecord<>(topic, key, "not avro".getBytes(StandardCharsets.UTF_8))).get();
        } catch (Exception e) {
            throw new IllegalStateException("cannot write to " + topic, e);
        }
    }

    /** The labels of every firing alert {@code name}. */
    private List<Map<String, String>> firing(String name) {
        return alerts(name, "firing");
    }

    private List<Map<String, String>> firingOrPending(String name) {
        List<Map<String, String>> all = new ArrayList<>(alerts(name, "firing"));
        all.addAll(alerts(name, "pending"));
        return all;
    }

    @SuppressWarnings("unchecked")
    private List<Map<String, String>> alerts(String name, String state) {
        return prometheus.alerts().stream()
                .filter(alert -> name.equals(alert.path("labels").path("alertname").asText()) && state.equals(alert.path("state").asText()))
                .map(alert -> (Map<String, String>) JSON.convertValue(alert.path("labels"), Map.class))
                .toList();
    }

    /** Where an expression comes from (for the failure message) and the PromQL Prometheus is asked. */
    private record Expression(String where, String promql) {
    }

    /**
     * Every panel's and variable's query, with Grafana's variables as a dashboard shows them by default
     * ({@code All}) and {@code label_values(…)} as the series it lists.
     */
    private static List<Expression> dashboardExpressions() throws IOException {
        JsonNode dashboard = JSON.readTree(MONITORING.resolve("devhealth-dashboard.json").toFile());
        List<Expression> expressions = new ArrayList<>();
        for (JsonNode variable : dashboard.path("templating").path("list")) {
            if ("query".equals(variable.path("type").asText())) {
                Matcher values = LABEL_VALUES.matcher(variable.path("query").path("query").asText());
                assertThat(values.matches()).as("variable " + variable.path("name").asText() + " is a label_values() query").isTrue();
                expressions.add(new Expression("variable $" + variable.path("name").asText(),
                        grafana("count by (" + values.group(2) + ") (" + values.group(1) + ")")));
            }
        }
        for (JsonNode panel : dashboard.path("panels")) {
            for (JsonNode target : panel.path("targets")) {
                expressions.add(new Expression("panel \"" + panel.path("title").asText() + "\" (id " + panel.path("id").asInt() + ", "
                        + target.path("refId").asText() + ")", grafana(target.path("expr").asText())));
            }
        }
        return expressions;
    }

    private static String grafana(String expr) {
        return expr.replace("$__rate_interval", "1m").replace("$cluster", ".*").replace("$node", ".*").replace("$product", ".*");
    }

    /**
     * What every alert watches: an alert that is not firing returns nothing, so each comparison with a
     * number becomes a {@code bool} one, which returns a series (0 or 1) wherever the metrics compared exist.
     */
    @SuppressWarnings("unchecked")
    private static List<Expression> alertSignals() throws IOException {
        Map<String, Object> rules;
        try (Reader reader = Files.newBufferedReader(MONITORING.resolve("devhealth-rules.yaml"))) {
            rules = new Yaml(new LoaderOptions()).load(reader);
        }
        List<Expression> signals = new ArrayList<>();
        for (Map<String, Object> group : (List<Map<String, Object>>) rules.get("groups")) {
            for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
                String expr = (String) rule.get("expr");
                Matcher comparison = COMPARISON.matcher(expr);
                assertThat(comparison.find()).as("alert " + rule.get("alert") + " compares with a number").isTrue();
                signals.add(new Expression("alert " + rule.get("alert"), comparison.reset().replaceAll("$1 bool ")));
            }
        }
        return signals;
    }

    private static List<Expression> concat(List<Expression> first, List<Expression> second) {
        List<Expression> all = new ArrayList<>(first);
        all.addAll(second);
        return all;
    }
}
