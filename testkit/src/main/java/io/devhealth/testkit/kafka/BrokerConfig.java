package io.devhealth.testkit.kafka;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * On a parameter resolved by {@link KafkaClusterExtension}: one broker property of a broker of the
 * test's own (it implies {@link OwnBroker}), applied over the embedded broker's single-node defaults.
 *
 * <pre>{@code
 * void shouldKeepDataAcrossARestart(@BrokerConfig(name = "log.retention.hours", value = "1") EmbeddedKafkaCluster kafka)
 * }</pre>
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.PARAMETER)
@Repeatable(BrokerConfig.List.class)
public @interface BrokerConfig {

    /** @return the broker property, e.g. {@code transaction.max.timeout.ms} */
    String name();

    /** @return its value */
    String value();

    /** Holds repeated {@link BrokerConfig}s. */
    @Documented
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.PARAMETER)
    @interface List {
        BrokerConfig[] value();
    }
}
