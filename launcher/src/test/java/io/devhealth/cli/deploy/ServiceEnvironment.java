package io.devhealth.cli.deploy;

import io.devhealth.cli.SchemaRegistrationConfig;
import io.devhealth.collector.CollectorConfig;
import io.devhealth.query.QueryableProcessor;
import io.devhealth.runtime.config.ServiceConfig;
import io.devhealth.sink.SinkConfig;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.common.config.ConfigDef;

/** The environment variables each devhealth subcommand understands, derived from its ConfigDef. */
final class ServiceEnvironment {

    private static final Map<String, ConfigDef> DEFINITIONS = Map.of(
            "collector", CollectorConfig.DEFINITION,
            "processor", QueryableProcessor.definition(),
            "sink", SinkConfig.DEFINITION,
            "schemas", SchemaRegistrationConfig.DEFINITION);

    private ServiceEnvironment() {}

    static boolean isService(String subcommand) {
        return DEFINITIONS.containsKey(subcommand);
    }

    /** The DEVHEALTH_* variables among {@code names} that {@code subcommand} would silently ignore. */
    static List<String> unknownVariables(String subcommand, Set<String> names) {
        ConfigDef definition = DEFINITIONS.get(subcommand);
        Set<String> known = definition == null ? Set.of()
                : definition.names().stream().map(ServiceConfig::envName).collect(Collectors.toSet());
        String passThrough = ServiceConfig.envName(ServiceConfig.KAFKA_PREFIX);
        return names.stream()
                .filter(n -> n.startsWith(ServiceConfig.ENV_PREFIX))
                .filter(n -> !known.contains(n) && !n.startsWith(passThrough))
                .sorted()
                .toList();
    }

    /** Required options (no default) that the variables do not set. */
    static List<String> missingRequired(String subcommand, Set<String> names) {
        ConfigDef definition = DEFINITIONS.get(subcommand);
        return definition.configKeys().values().stream()
                .filter(key -> !key.hasDefault())
                .map(key -> ServiceConfig.envName(key.name))
                .filter(env -> !names.contains(env))
                .sorted()
                .toList();
    }
}
