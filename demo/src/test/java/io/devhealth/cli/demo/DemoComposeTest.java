package io.devhealth.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * docker-compose.yml's simulated node runs the demo image (the Dockerfile's {@code demo} stage), not
 * the production one, and its command is one this artifact's CLI accepts. The production services'
 * commands are checked against the production CLI by the launcher's DockerComposeTest.
 */
class DemoComposeTest {

    @Test
    @SuppressWarnings("unchecked")
    void shouldRunTheSimulatedNodeFromTheDemoImageWithACommandTheDemoCliAccepts() throws IOException {
        Map<String, Object> node;
        try (Reader reader = Files.newBufferedReader(Path.of("..", "docker-compose.yml"))) {
            Map<String, Map<String, Object>> services =
                    (Map<String, Map<String, Object>>) new Yaml(new LoaderOptions()).<Map<String, Object>>load(reader).get("services");
            node = services.get("simulated-node");
        }

        assertThat(String.valueOf(node.get("image"))).startsWith("devhealth-demo:");
        assertThat((Map<String, Object>) node.get("build")).containsEntry("target", "demo");
        List<String> command = (List<String>) node.get("command");
        assertThat(command).first().isEqualTo("simulate-node");
        // Throws ParameterException for an unknown subcommand or option.
        DevhealthDemo.commandLine().parseArgs(command.toArray(String[]::new));
    }
}
