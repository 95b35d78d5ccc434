package io.devhealth.testkit.kafka;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * On an {@link io.devhealth.simulators.kafka.EmbeddedKafkaCluster} parameter resolved by
 * {@link KafkaClusterExtension}: a broker of the test's own instead of the shared one, started for it and
 * closed when its scope ends (see the extension for the scopes). Required by a test that stops, restarts
 * or closes its broker, or that needs fixed topic names; {@link BrokerConfig} implies it.
 *
 * <p>Not named {@code Isolated}: JUnit's {@code org.junit.jupiter.api.parallel.Isolated} means
 * something else (no parallel execution).
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.PARAMETER)
public @interface OwnBroker {
}
