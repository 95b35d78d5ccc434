package io.devhealth.testkit.kafka;

import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import java.lang.reflect.Parameter;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * JUnit 5 extension that injects running in-process Kafka brokers into test constructors, lifecycle
 * methods ({@code @BeforeAll}, {@code @BeforeEach}, …) and test methods. What a parameter gets is
 * declared on it:
 *
 * <table>
 *   <caption>What a parameter gets</caption>
 *   <tr><th>parameter</th><th>broker</th></tr>
 *   <tr><td>{@code EmbeddedKafkaCluster kafka}</td>
 *       <td>the one broker shared by every test of this JVM (a surefire/failsafe fork), started on first
 *       use and closed when the engine finishes</td></tr>
 *   <tr><td>{@code @OwnBroker EmbeddedKafkaCluster kafka}</td>
 *       <td>a broker of its own, with the single-node defaults</td></tr>
 *   <tr><td>{@code @BrokerConfig(name = "log.retention.hours", value = "1") EmbeddedKafkaCluster kafka}
 *       (repeatable)</td>
 *       <td>a broker of its own with these broker properties over the defaults</td></tr>
 *   <tr><td>{@code SecuredKafkaCluster secured} (with or without {@code @BrokerConfig})</td>
 *       <td>a broker of its own with TLS + SASL/SCRAM and mTLS listeners, and the certificates a
 *       client needs ({@link SecuredKafkaCluster})</td></tr>
 * </table>
 *
 * <p><b>Scope of an own broker.</b> Every declaring parameter gets a broker of its own, closed when the
 * scope it was resolved in ends — whether the test passed or failed: a test method's or a
 * {@code @BeforeEach}/{@code @AfterEach} method's parameter lives until that test's {@code @AfterEach}
 * methods have run; a {@code @BeforeAll}/{@code @AfterAll} parameter (and a constructor's, under JUnit's
 * default instantiation scope) until the class's {@code @AfterAll} methods have run. To use one own
 * broker in {@code @BeforeEach} and in the test, keep it in a field. Own brokers cost a start each
 * (5–10 s cold on 2 cores): declare one only where the test needs it.
 *
 * <p><b>The shared broker.</b> Tests share it and must use their own topics, group ids,
 * {@code application.id}s and transactional ids ({@link EmbeddedKafkaCluster#uniqueName(String)}). It
 * must never be stopped: a test that stops, restarts or closes its broker declares {@link OwnBroker}.
 * After every test and class that uses this extension it checks that the shared broker still runs; if
 * not, that test fails, naming itself, and the next test gets a fresh shared broker.
 *
 * <pre>{@code
 * @ExtendWith(KafkaClusterExtension.class)
 * class HealthTopologyIT {
 *     @Test
 *     void shouldJoinHealthToPods(EmbeddedKafkaCluster kafka) { ... }           // shared
 *
 *     @Test
 *     void shouldSurviveABrokerRestart(@OwnBroker EmbeddedKafkaCluster kafka) {  // closed after this test
 *         kafka.stopBroker();
 *         kafka.restartBroker();
 *     }
 * }
 * }</pre>
 *
 * <p>Read topics with {@link TopicReader}.
 */
public final class KafkaClusterExtension implements ParameterResolver, AfterEachCallback, AfterAllCallback {

    private static final Logger LOGGER = LoggerFactory.getLogger(KafkaClusterExtension.class);
    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(KafkaClusterExtension.class);
    private static final String KEY = "shared-embedded-kafka-cluster";

    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        Class<?> type = parameterContext.getParameter().getType();
        return type == EmbeddedKafkaCluster.class || type == SecuredKafkaCluster.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        Parameter parameter = parameterContext.getParameter();
        Map<String, String> config = brokerConfig(parameterContext);
        String owner = parameterContext.getDeclaringExecutable().getName() + "(" + parameter.getName() + ")";
        ExtensionContext.Store store = extensionContext.getStore(NAMESPACE);
        // One key per declaration and scope: the store closes the broker when the scope ends.
        Object key = new OwnKey(parameterContext.getDeclaringExecutable().toGenericString(), parameterContext.getIndex());
        if (parameter.getType() == SecuredKafkaCluster.class) {
            return store.getOrComputeIfAbsent(key, k -> {
                LOGGER.info("starting secured kafka broker of its own for={} scope={} config={}", owner,
                        extensionContext.getUniqueId(), config);
                return SecuredKafkaCluster.start(config);
            }, SecuredKafkaCluster.class);
        }
        if (!config.isEmpty() || parameterContext.isAnnotated(OwnBroker.class)) {
            return store.getOrComputeIfAbsent(key, k -> {
                LOGGER.info("starting kafka broker of its own for={} scope={} config={}", owner,
                        extensionContext.getUniqueId(), config);
                return EmbeddedKafkaCluster.start(config);
            }, EmbeddedKafkaCluster.class);
        }
        return sharedCluster(extensionContext);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        checkSharedBrokerRuns(context);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        checkSharedBrokerRuns(context);
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

    private static Map<String, String> brokerConfig(ParameterContext parameterContext) {
        Map<String, String> config = new LinkedHashMap<>();
        for (BrokerConfig entry : parameterContext.findRepeatableAnnotations(BrokerConfig.class)) {
            if (config.put(entry.name(), entry.value()) != null) {
                throw new IllegalArgumentException("broker property " + entry.name() + " declared twice on "
                        + parameterContext.getParameter());
            }
        }
        return config;
    }

    /** A stopped or closed shared broker would fail every later test of the fork: fail the one that did it. */
    private static void checkSharedBrokerRuns(ExtensionContext context) {
        ExtensionContext.Store root = context.getRoot().getStore(NAMESPACE);
        EmbeddedKafkaCluster shared = root.get(KEY, EmbeddedKafkaCluster.class);
        if (shared == null || shared.isRunning()) {
            return;
        }
        root.remove(KEY);
        shared.close();
        throw new IllegalStateException(context.getDisplayName() + " stopped or closed the shared broker " + shared
                + "; a test that stops its broker declares @OwnBroker. The next test gets a fresh shared broker.");
    }

    /** Which declaration an own broker was resolved for (a store key; the scope is the store's). */
    private record OwnKey(String executable, int index) {
    }
}
