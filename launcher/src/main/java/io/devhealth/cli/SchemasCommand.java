package io.devhealth.cli;

import io.devhealth.processor.PipelineSchemas;
import io.devhealth.runtime.config.ServiceConfig;
import io.devhealth.schema.serde.SchemaRegistries;
import io.devhealth.schema.serde.SchemaRegistryException;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.kafka.common.config.ConfigException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** The pipeline's schemas in the registry, for deployments whose services run with {@code auto.register.schemas=false}. */
@Command(name = "schemas", mixinStandardHelpOptions = true, description = "Schema registry subjects of the pipeline.",
        subcommands = SchemasCommand.Register.class)
final class SchemasCommand implements Runnable {

    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    @Command(name = "register", mixinStandardHelpOptions = true,
            description = "Registers the writer schema of every subject the services write (topics and the processor's "
                    + "changelogs), with the registry settings of the services (DEVHEALTH_SCHEMA_REGISTRY_*); "
                    + "run it with credentials that may write, before the services start.")
    static final class Register implements Callable<Integer> {

        @Spec
        CommandSpec spec;

        @Option(names = "--set", paramLabel = "KEY=VALUE", description = "Set a configuration option (overrides the environment).")
        Map<String, String> overrides = new LinkedHashMap<>();

        @Option(names = "--help-config", description = "List every configuration option with its environment variable and default.")
        boolean helpConfig;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            if (helpConfig) {
                out.print(ServiceConfig.describe(SchemaRegistrationConfig.DEFINITION));
                return 0;
            }
            SchemaRegistrationConfig config;
            try {
                config = SchemaRegistrationConfig.fromEnvironment(System.getenv(), overrides);
            } catch (ConfigException e) {
                err.println("configuration error: " + e.getMessage());
                return 2;
            }
            try {
                PipelineSchemas.registerAll(SchemaRegistries.fromUrl(config.schemaRegistryUrl(), config.originals()),
                        config.topics(), config.applicationId()).forEach((subject, id) -> out.println(subject + " " + id));
            } catch (SchemaRegistryException | IllegalArgumentException e) {
                // The registry client's messages name the URL and the kind of credentials, never a secret.
                err.println("registration failed: " + e.getMessage());
                return 1;
            }
            return 0;
        }
    }
}
