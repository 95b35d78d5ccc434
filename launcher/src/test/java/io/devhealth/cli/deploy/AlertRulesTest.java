package io.devhealth.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.testkit.prometheus.PrometheusBinaries;
import io.devhealth.testkit.prometheus.Promtool;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * devhealth's alert rules as operators get them: the rule file passes Prometheus' own check and its
 * unit tests ({@code promtool}, Debian's package {@code prometheus}; skipped without it unless
 * {@code devhealth.prometheus.required}), every alert has a unit test that makes it fire, and the
 * PrometheusRule k8s/ ships is exactly the one rendered from the rule file: the rules are written once.
 */
class AlertRulesTest {

    private static final Path MONITORING = Path.of("..", "k8s", "base", "monitoring");
    private static final Path RULES = MONITORING.resolve("devhealth-rules.yaml");
    private static final Path RULE_TESTS = MONITORING.resolve("devhealth-rules.test.yaml");
    private static final Path PROMETHEUS_RULE = MONITORING.resolve("prometheusrule.yaml");
    private static final Path RENDER = Path.of("..", "scripts", "monitoring", "render-prometheusrule.sh");

    @Test
    void shouldPassPromtoolsCheckOfTheRuleFile() {
        String output = new Promtool(PrometheusBinaries.find()).checkRules(RULES);
        assertThat(output).contains("SUCCESS: " + alerts(RULES).size() + " rules found");
    }

    @Test
    void shouldPassTheRulesUnitTestsWithSyntheticSeries() {
        assertThat(new Promtool(PrometheusBinaries.find()).testRules(RULE_TESTS)).contains("SUCCESS");
    }

    @Test
    @SuppressWarnings("unchecked")
    void shouldMakeEveryAlertFireInTheUnitTests() throws IOException {
        Set<String> firing = new TreeSet<>();
        Map<String, Object> tests = load(RULE_TESTS);
        for (Map<String, Object> test : (List<Map<String, Object>>) tests.get("tests")) {
            for (Map<String, Object> check : (List<Map<String, Object>>) test.getOrDefault("alert_rule_test", List.of())) {
                if (!((List<?>) check.getOrDefault("exp_alerts", List.of())).isEmpty()) {
                    firing.add((String) check.get("alertname"));
                }
            }
        }
        assertThat(firing).as("alerts a unit test makes fire").containsExactlyElementsOf(new TreeSet<>(alerts(RULES)));
    }

    @Test
    void shouldShipThePrometheusRuleRenderedFromTheRuleFile() throws IOException, InterruptedException {
        Process render = new ProcessBuilder("bash", RENDER.toString()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String rendered = new String(render.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(render.waitFor()).as("render-prometheusrule.sh exit code").isZero();

        assertThat(Files.readString(PROMETHEUS_RULE))
                .as("k8s/base/monitoring/prometheusrule.yaml is rendered from devhealth-rules.yaml: run "
                        + "scripts/monitoring/render-prometheusrule.sh > k8s/base/monitoring/prometheusrule.yaml")
                .isEqualTo(rendered);
        Map<String, Object> shipped = load(PROMETHEUS_RULE);
        assertThat(shipped).containsEntry("kind", "PrometheusRule").containsEntry("spec", load(RULES));
    }

    /** The alert names of a rule file or of a PrometheusRule's spec. */
    @SuppressWarnings("unchecked")
    static List<String> alerts(Path ruleFile) {
        try {
            Map<String, Object> rules = load(ruleFile);
            return ((List<Map<String, Object>>) rules.get("groups")).stream()
                    .flatMap(group -> ((List<Map<String, Object>>) group.get("rules")).stream())
                    .map(rule -> (String) rule.get("alert"))
                    .filter(Objects::nonNull)
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Map<String, Object> load(Path file) throws IOException {
        try (Reader reader = Files.newBufferedReader(file)) {
            return new Yaml(new LoaderOptions()).load(reader);
        }
    }
}
