package io.devhealth.testkit.kafka;

import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * JUnit 5 extension that injects a running {@link EmbeddedKafkaCluster} into test constructors,
 * {@code @BeforeAll}/{@code @BeforeEach} methods and test methods.
 *
 * <p>One broker serves the whole test run of a JVM (a surefire/failsafe fork): it is started on first
 * use and kept in the root {@link ExtensionContext.Store}, which closes it ({@link AutoCloseable}) when
 * the engine finishes. Tests therefore share it and must use their own topics, group ids,
 * {@code application.id}s and transactional ids: {@link EmbeddedKafkaCluster#uniqueName(String)}.
 * Tests that need a broker of their own (fault tests that stop it, special broker configuration) call
 * {@link EmbeddedKafkaCluster#start(java.util.Map)} themselves.
 *
 * <pre>{@code
 * @ExtendWith(KafkaClusterExtension.class)
 * class HealthTopologyIT {
 *     @Test
 *     void shouldJoinHealthToPods(EmbeddedKafkaCluster kafka) {
 *         String topic = EmbeddedKafkaCluster.uniqueName("device-health");
 *         kafka.createTopics(3, topic);
 *         ...
 *     }
 * }
 * }</pre>
 *
 * <p>Do not call {@code stopBroker()} or {@code close()} on the shared instance.
 */
public final class KafkaClusterExtension implements ParameterResolver {

    private static final Logger LOGGER = LoggerFactory.getLogger(KafkaClusterExtension.class);
    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(KafkaClusterExtension.class);
    private static final String KEY = "shared-embedded-kafka-cluster";

    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == EmbeddedKafkaCluster.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return sharedCluster(extensionContext);
    }

    /**
     * The broker shared by every test of this JVM, started on first call; for other extensions.
     *
     * @param context any extension context of the run
     * @return the running shared cluster
     */
    public static EmbeddedKafkaCluster sharedCluster(ExtensionContext context) {
        // The root store is closed at the end of the engine run; AutoCloseable values are closed then
        // (JUnit 5.13+, junit.jupiter.extensions.store.close.autocloseable.enabled, default true).
        return context.getRoot().getStore(NAMESPACE).getOrComputeIfAbsent(KEY, key -> {
            LOGGER.info("starting shared kafka broker for this test jvm");
            return EmbeddedKafkaCluster.start();
        }, EmbeddedKafkaCluster.class);
    }
}
