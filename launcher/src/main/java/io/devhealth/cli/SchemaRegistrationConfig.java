package io.devhealth.cli;

import io.devhealth.runtime.config.ServiceConfig;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;

/**
 * The settings of {@code devhealth schemas register}: the registry options every service has (URL,
 * TLS, credentials, topic prefix; the same DEVHEALTH_* variables, so the services' ConfigMap serves it
 * too) and the processor's {@code application.id}, which names its stores' changelog subjects.
 */
public final class SchemaRegistrationConfig extends ServiceConfig {

    public static final String APPLICATION_ID = "application.id";

    public static final ConfigDef DEFINITION = pipelineOptions()
            .define(APPLICATION_ID, ConfigDef.Type.STRING, "devhealth-processor", new ConfigDef.NonEmptyString(),
                    ConfigDef.Importance.HIGH, "The stream-processor's application.id: its stores' changelog subjects are "
                            + "<application.id>-<store>-changelog-value.");

    public SchemaRegistrationConfig(Map<?, ?> originals) {
        super(DEFINITION, originals);
    }

    public static SchemaRegistrationConfig fromEnvironment(Map<String, String> env, Map<String, ?> overrides) {
        return new SchemaRegistrationConfig(resolve(DEFINITION, env, overrides));
    }

    public String applicationId() {
        return getString(APPLICATION_ID);
    }
}
