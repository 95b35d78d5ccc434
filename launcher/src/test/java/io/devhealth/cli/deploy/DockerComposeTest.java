package io.devhealth.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.devhealth.cli.Devhealth;
import io.devhealth.testkit.kafka.StrimziResources;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * There is no Docker engine here, so {@code docker compose up} cannot be run in the build: this test
 * reads docker-compose.yml (with its YAML anchors and merge keys resolved) and checks what a broken
 * file would get wrong: unpinned images, missing health checks, dangling dependencies, commands the
 * devhealth CLI does not accept, environment variables the services would ignore.
 */
class DockerComposeTest {

    private static final Path COMPOSE = Path.of("..", "docker-compose.yml");
    /** Pinned: an explicit version tag, never latest. */
    private static final Pattern PINNED_IMAGE = Pattern.compile("^[a-z0-9./-]+:v?\\d+(\\.\\d+)*([._-][A-Za-z0-9.]+)?$");
    /** Distroless images have no shell for a health check; their readiness is checked by another service. */
    private static final Set<String> NO_HEALTHCHECK_BY_DESIGN = Set.of("kube-apiserver");

    private static Map<String, Map<String, Object>> services;

    @BeforeAll
    @SuppressWarnings("unchecked")
    static void load() throws IOException {
        try (Reader reader = Files.newBufferedReader(COMPOSE)) {
            Map<String, Object> compose = new Yaml(new LoaderOptions()).load(reader);
            services = (Map<String, Map<String, Object>>) compose.get("services");
        }
    }

    private static boolean runsToCompletion(Map<String, Object> service) {
        return "no".equals(String.valueOf(service.get("restart")));
    }

    @Test
    void shouldBringUpKafkaRegistryApiServerServicesAndASimulatedNode() {
        assertThat(services).containsKeys("kafka", "schema-registry", "etcd", "kube-apiserver",
                "processor", "sink", "collector", "simulated-node");
    }

    @Test
    void shouldPinEveryImage() {
        services.forEach((name, service) ->
                assertThat(String.valueOf(service.get("image"))).as("image of " + name).matches(PINNED_IMAGE));
    }

    @Test
    void shouldGiveEveryLongRunningServiceAHealthCheck() {
        services.forEach((name, service) -> {
            if (!runsToCompletion(service) && !NO_HEALTHCHECK_BY_DESIGN.contains(name)) {
                assertThat(service).as("healthcheck of " + name).containsKey("healthcheck");
                @SuppressWarnings("unchecked")
                Map<String, Object> check = (Map<String, Object>) service.get("healthcheck");
                assertThat(check.get("test")).as("healthcheck test of " + name).isInstanceOf(List.class);
            }
        });
    }

    @Test
    @SuppressWarnings("unchecked")
    void shouldDependOnlyOnServicesThatCanSatisfyTheCondition() {
        services.forEach((name, service) -> {
            Object dependsOn = service.get("depends_on");
            if (dependsOn == null) {
                return;
            }
            ((Map<String, Map<String, String>>) dependsOn).forEach((target, spec) -> {
                assertThat(services).as(name + " depends on " + target).containsKey(target);
                Map<String, Object> dependency = services.get(target);
                switch (spec.get("condition")) {
                    case "service_healthy" -> assertThat(dependency).as(target + " must have a healthcheck").containsKey("healthcheck");
                    case "service_completed_successfully" -> assertThat(runsToCompletion(dependency))
                            .as(target + " must run to completion (restart: \"no\")").isTrue();
                    case "service_started" -> { }
                    default -> throw new AssertionError("unknown condition " + spec);
                }
            });
        });
    }

    @Test
    @SuppressWarnings("unchecked")
    void shouldPublishPortsOnLoopbackOnly() {
        services.forEach((name, service) -> {
            for (Object port : (List<Object>) service.getOrDefault("ports", List.of())) {
                assertThat(String.valueOf(port)).as("port of " + name).startsWith("127.0.0.1:");
            }
        });
    }

    @Test
    @SuppressWarnings("unchecked")
    void shouldRunDevhealthCommandsTheCliAcceptsWithSettingsTheServicesKnow() {
        List<String> checked = new ArrayList<>();
        services.forEach((name, service) -> {
            if (!String.valueOf(service.get("image")).startsWith("devhealth:")) {
                return;
            }
            List<String> command = (List<String>) service.get("command");
            assertThat(command).as("command of " + name).isNotEmpty();
            // Throws ParameterException for an unknown subcommand or option.
            Devhealth.commandLine().parseArgs(command.toArray(String[]::new));
            Map<String, Object> env = (Map<String, Object>) service.getOrDefault("environment", Map.of());
            String subcommand = command.get(0);
            if (ServiceEnvironment.isService(subcommand)) {
                assertThat(ServiceEnvironment.unknownVariables(subcommand, env.keySet())).as("unknown settings of " + name).isEmpty();
                assertThat(ServiceEnvironment.missingRequired(subcommand, env.keySet())).as("missing settings of " + name).isEmpty();
            }
            checked.add(name);
        });
        // The simulated node runs the demo image (demo's DemoComposeTest); the production CLI has no simulate-node.
        assertThat(checked).contains("processor", "sink", "collector").doesNotContain("simulated-node");
    }

    @Test
    @SuppressWarnings("unchecked")
    void shouldScrapeEveryServiceWithDevhealthsAlertRulesInComposesPrometheus() throws IOException {
        Map<String, Object> prometheus = services.get("prometheus");
        assertThat((List<String>) prometheus.get("volumes"))
                .as("the rule file k8s/ ships as a PrometheusRule, not a copy")
                .contains("./k8s/base/monitoring/devhealth-rules.yaml:/etc/prometheus/devhealth-rules.yaml:ro");
        Map<String, Object> compose;
        try (Reader reader = Files.newBufferedReader(COMPOSE)) {
            compose = new Yaml(new LoaderOptions()).load(reader);
        }
        String content = ((Map<String, Map<String, String>>) compose.get("configs")).get("prometheus-config").get("content");
        Map<String, Object> config = new Yaml(new LoaderOptions()).load(content);
        assertThat((List<String>) config.get("rule_files")).containsExactly("/etc/prometheus/devhealth-rules.yaml");
        List<String> targets = ((List<Map<String, Object>>) config.get("scrape_configs")).stream()
                .flatMap(scrape -> ((List<Map<String, List<String>>>) scrape.get("static_configs")).stream())
                .flatMap(group -> group.get("targets").stream())
                .toList();
        assertThat(targets).containsExactlyInAnyOrder("processor:8081", "sink:8080", "collector:8080");
        for (String target : targets) {
            String service = target.substring(0, target.indexOf(':'));
            Map<String, Object> env = (Map<String, Object>) services.get(service).get("environment");
            assertThat(env).as(service + " serves /metrics where Prometheus looks")
                    .containsEntry("DEVHEALTH_HTTP_PORT", Integer.parseInt(target.substring(target.indexOf(':') + 1)));
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void shouldConnectEveryServiceOverSaslSslAsItsOwnUserAndTheRegistryOverHttps() {
        for (String name : List.of("collector", "processor", "sink")) {
            Map<String, Object> env = (Map<String, Object>) services.get(name).get("environment");
            assertThat(env).as(name).containsEntry("DEVHEALTH_KAFKA_SECURITY_PROTOCOL", "SASL_SSL")
                    .containsEntry("DEVHEALTH_AUTO_REGISTER_SCHEMAS", "false");
            assertThat(String.valueOf(env.get("DEVHEALTH_SCHEMA_REGISTRY_URL"))).as(name).startsWith("https://");
            assertThat(String.valueOf(env.get("DEVHEALTH_KAFKA_SASL_JAAS_CONFIG"))).as(name + "'s own user")
                    .contains("username=\"devhealth-" + name + "\"").contains("password=\"${DEVHEALTH_COMPOSE_");
            assertThat(String.valueOf(env.get("DEVHEALTH_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO"))).startsWith("reader:${");
        }
        String broker = String.join("\n", (List<String>) services.get("kafka").get("command"));
        assertThat(broker).contains("listeners=SASL_SSL://:9092,CONTROLLER://:9093")
                .contains("listener.security.protocol.map=CONTROLLER:SSL,SASL_SSL:SASL_SSL")
                .contains("authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer")
                .doesNotContain("PLAINTEXT");
        Map<String, Object> registry = (Map<String, Object>) services.get("schema-registry").get("environment");
        assertThat(registry).containsEntry("QUARKUS_HTTP_INSECURE_REQUESTS", "disabled").containsEntry("QUARKUS_HTTP_AUTH_BASIC", "true");
    }

    @Test
    @SuppressWarnings("unchecked")
    void shouldCreateTheTopicsAndAclsOfTheStrimziComponent() {
        String script = String.join("\n", (List<String>) services.get("topics").get("command"));
        StrimziResources strimzi = StrimziResources.readComponent(Path.of("..", "k8s", "components", "strimzi"));
        Set<String> granted = new HashSet<>();
        Set<String> topics = new HashSet<>();
        for (String line : script.lines().map(String::strip).toList()) {
            List<String> words = List.of(line.split("\\s+"));
            if (words.get(0).equals("acl")) {
                String type = words.get(2).equals("transactional-id") ? "TRANSACTIONAL_ID" : words.get(2).toUpperCase(Locale.ROOT);
                for (String operation : words.subList(5, words.size())) {
                    granted.add("User:" + words.get(1) + " " + type + " " + words.get(3).toUpperCase(Locale.ROOT) + " " + words.get(4)
                            + " " + operation.replaceAll("([a-z])([A-Z])", "$1_$2").toUpperCase(Locale.ROOT));
                }
            } else if (words.get(0).equals("topic")) {
                topics.add(words.get(1));
                StrimziResources.Topic shipped = strimzi.topics().stream().filter(t -> t.name().equals(words.get(1))).findFirst()
                        .orElseThrow(() -> new AssertionError("compose creates a topic k8s/ does not: " + line));
                shipped.config().forEach((key, value) -> {
                    if (!key.equals("min.insync.replicas")) {
                        assertThat(line).as("topic " + shipped.name()).contains("--config " + key + "=" + value);
                    }
                });
            }
        }
        Set<String> shipped = strimzi.users().stream().flatMap(u -> u.acls().stream())
                .map(a -> a.entry().principal() + " " + a.pattern().resourceType() + " " + a.pattern().patternType() + " "
                        + a.pattern().name() + " " + a.entry().operation())
                .collect(Collectors.toSet());
        assertThat(granted).as("compose's ACLs are the Strimzi component's").containsExactlyInAnyOrderElementsOf(shipped);
        assertThat(topics).containsExactlyInAnyOrderElementsOf(strimzi.topics().stream().map(StrimziResources.Topic::name).toList());
    }
}
