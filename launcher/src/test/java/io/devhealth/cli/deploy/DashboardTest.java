package io.devhealth.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Grafana dashboard as an operator imports it: Grafana's JSON model with its schema version, a
 * row per stage, the cluster/node/product variables, every panel querying the dashboard's Prometheus
 * without overlapping another, and every metric that it and the alert rules name documented in
 * docs/OBSERVABILITY.md. That those metrics exist is ObservabilityIT's (demo), on a real Prometheus.
 */
class DashboardTest {

    private static final Path MONITORING = Path.of("..", "k8s", "base", "monitoring");
    private static final Path DOCS = Path.of("..", "docs", "OBSERVABILITY.md");
    private static final Pattern METRIC = Pattern.compile("\\bdevhealth_[a-z0-9_]+");
    /** A documented metric's name: the first cell of a table row. */
    private static final Pattern DOCUMENTED = Pattern.compile("(?m)^\\| `(devhealth_[a-z0-9_]+)`");
    private static final Set<String> SERIES_SUFFIXES = Set.of("_bucket", "_count", "_sum", "_max");
    private static JsonNode dashboard;

    @BeforeAll
    static void load() throws IOException {
        dashboard = new ObjectMapper().readTree(MONITORING.resolve("devhealth-dashboard.json").toFile());
    }

    private static List<JsonNode> panels(boolean rows) {
        List<JsonNode> found = new ArrayList<>();
        dashboard.path("panels").forEach(panel -> {
            if ("row".equals(panel.path("type").asText()) == rows) {
                found.add(panel);
            }
        });
        return found;
    }

    @Test
    void shouldStateItsSchemaVersionAndAStableUid() {
        assertThat(dashboard.path("schemaVersion").isInt()).as("schemaVersion").isTrue();
        assertThat(dashboard.path("schemaVersion").asInt()).isGreaterThanOrEqualTo(36);
        assertThat(dashboard.path("uid").asText()).isEqualTo("devhealth");
    }

    @Test
    void shouldHaveARowPerStageInTheOrderDataFlowsBack() {
        assertThat(panels(true)).extracting(row -> row.path("title").asText())
                .containsExactly("Fleet: stream-processor", "Collectors: one per node", "Sink: writes into Kubernetes");
    }

    @Test
    void shouldOfferClusterNodeAndProductAndUseEach() {
        List<String> variables = new ArrayList<>();
        dashboard.path("templating").path("list").forEach(v -> variables.add(v.path("name").asText()));
        assertThat(variables).containsExactly("datasource", "cluster", "node", "product");
        String expressions = String.join("\n", expressions());
        for (String variable : List.of("$cluster", "$node", "$product")) {
            assertThat(expressions).as("a panel filtered by " + variable).contains(variable);
        }
    }

    @Test
    void shouldQueryTheDashboardsPrometheusFromEveryPanelWithoutOverlaps() {
        Set<Integer> ids = new HashSet<>();
        Set<String> cells = new HashSet<>();
        for (JsonNode panel : dashboard.path("panels")) {
            String title = panel.path("title").asText();
            assertThat(ids.add(panel.path("id").asInt())).as("unique id of " + title).isTrue();
            JsonNode grid = panel.path("gridPos");
            assertThat(grid.path("x").asInt() + grid.path("w").asInt()).as("width of " + title).isLessThanOrEqualTo(24);
            for (int y = grid.path("y").asInt(); y < grid.path("y").asInt() + grid.path("h").asInt(); y++) {
                for (int x = grid.path("x").asInt(); x < grid.path("x").asInt() + grid.path("w").asInt(); x++) {
                    assertThat(cells.add(x + "," + y)).as(title + " overlaps another panel at " + x + "," + y).isTrue();
                }
            }
        }
        for (JsonNode panel : panels(false)) {
            String title = panel.path("title").asText();
            assertThat(panel.path("datasource").path("uid").asText()).as("datasource of " + title).isEqualTo("${datasource}");
            assertThat(panel.path("targets")).as("queries of " + title).isNotEmpty()
                    .allSatisfy(target -> assertThat(target.path("expr").asText()).as("expression of " + title).isNotBlank());
        }
    }

    @Test
    void shouldDocumentEveryMetricTheDashboardAndTheAlertRulesName() throws IOException {
        Set<String> documented = new TreeSet<>();
        Matcher rows = DOCUMENTED.matcher(Files.readString(DOCS));
        while (rows.find()) {
            documented.add(rows.group(1));
        }
        Set<String> named = new TreeSet<>();
        List<String> sources = new ArrayList<>(expressions());
        sources.add(Files.readString(MONITORING.resolve("devhealth-rules.yaml")));
        for (String source : sources) {
            Matcher metric = METRIC.matcher(source);
            while (metric.find()) {
                named.add(metric.group());
            }
        }
        assertThat(named).isNotEmpty();
        assertThat(named.stream().filter(name -> !documented.contains(name) && !documented.contains(withoutSeriesSuffix(name))))
                .as("metrics named but not in docs/OBSERVABILITY.md's tables").isEmpty();
    }

    private static String withoutSeriesSuffix(String name) {
        for (String suffix : SERIES_SUFFIXES) {
            if (name.endsWith(suffix)) {
                return name.substring(0, name.length() - suffix.length());
            }
        }
        return name;
    }

    /** Every panel's and variable's query. */
    private static List<String> expressions() {
        List<String> found = new ArrayList<>();
        panels(false).forEach(panel -> panel.path("targets").forEach(target -> found.add(target.path("expr").asText())));
        dashboard.path("templating").path("list").forEach(v -> found.add(v.path("query").path("query").asText()));
        return found;
    }
}
