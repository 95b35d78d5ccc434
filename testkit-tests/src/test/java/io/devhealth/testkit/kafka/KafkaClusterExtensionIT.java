package io.devhealth.testkit.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.devhealth.simulators.kafka.EmbeddedKafkaCluster;
import io.devhealth.simulators.kafka.KafkaSecurity;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/** What a parameter declares is what it gets, and an own broker never outlives its scope. */
@ExtendWith(KafkaClusterExtension.class)
class KafkaClusterExtensionIT {

    private static EmbeddedKafkaCluster classScoped;

    @BeforeAll
    static void startClassBroker(@OwnBroker EmbeddedKafkaCluster kafka) {
        classScoped = kafka;
    }

    @Test
    void shouldGiveAnOwnBrokerWithItsConfigurationApartFromTheShared(EmbeddedKafkaCluster shared,
            @BrokerConfig(name = "log.retention.hours", value = "3") @BrokerConfig(name = "message.max.bytes", value = "2000000")
            EmbeddedKafkaCluster own) throws Exception {
        assertThat(own).isNotSameAs(shared).isNotSameAs(classScoped);
        assertThat(own.isRunning()).isTrue();
        assertThat(classScoped.isRunning()).as("a @BeforeAll broker lives for the class").isTrue();
        assertThat(brokerConfig(own.admin(), "log.retention.hours")).isEqualTo("3");
        assertThat(brokerConfig(own.admin(), "message.max.bytes")).isEqualTo("2000000");
        assertThat(brokerConfig(shared.admin(), "log.retention.hours")).isEqualTo("168");
    }

    @Test
    void shouldStartASecuredBrokerWithItsCertificates(SecuredKafkaCluster secured) throws Exception {
        String password = KafkaSecurity.randomSecret();
        secured.security().createScramUser(secured.cluster(), "reader", password);

        try (Admin scram = Admin.create(secured.security().scramClient(secured.cluster(), "reader", password));
             Admin mtls = Admin.create(secured.security().mtlsClient(secured.cluster()))) {
            assertThat(scram.describeCluster().nodes().get(30, TimeUnit.SECONDS)).hasSize(1);
            assertThat(mtls.describeCluster().nodes().get(30, TimeUnit.SECONDS)).hasSize(1);
        }
    }

    /**
     * Runs {@link Scoped} in an engine of its own: its own brokers are closed after their test whether it
     * passed or failed, and a test that stops the shared broker fails, naming itself.
     */
    @Test
    void shouldCloseOwnBrokersAfterTheirScopeAndFailATestThatStopsTheSharedOne() {
        Scoped.seen.clear();
        Scoped.launched = true;
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        try {
            LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request().selectors(selectClass(Scoped.class)).build(),
                    listener);
        } finally {
            Scoped.launched = false;
        }

        TestExecutionSummary summary = listener.getSummary();
        assertThat(summary.getTestsStartedCount()).isEqualTo(3);
        assertThat(summary.getFailures()).extracting(f -> f.getTestIdentifier().getDisplayName() + ": " + f.getException().getMessage())
                .containsExactlyInAnyOrder(
                        "failsWithAnOwnBroker(EmbeddedKafkaCluster): failed on purpose",
                        "stopsTheSharedBroker(EmbeddedKafkaCluster): stopsTheSharedBroker(EmbeddedKafkaCluster) stopped or closed the shared broker "
                                + Scoped.seen.get(1) + "; a test that stops its broker declares @OwnBroker. The next test gets a fresh shared broker.");
        assertThat(Scoped.seen).hasSize(3).allSatisfy(cluster -> {
            assertThat(cluster.isRunning()).as("%s closed", cluster).isFalse();
            assertThat(Files.exists(cluster.baseDirectory())).as("%s deleted", cluster.baseDirectory()).isFalse();
        });
        assertThat(Scoped.seen.get(2)).as("a fresh shared broker after the stopped one").isNotSameAs(Scoped.seen.get(1));
    }

    private static String brokerConfig(Admin admin, String name) throws Exception {
        ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, "1");
        Config config = admin.describeConfigs(List.of(broker)).all().get(30, TimeUnit.SECONDS).get(broker);
        return config.get(name).value();
    }

    /** Not a test of its own: run only by {@link #shouldCloseOwnBrokersAfterTheirScopeAndFailATestThatStopsTheSharedOne()}. */
    @ExtendWith(KafkaClusterExtension.class)
    @org.junit.jupiter.api.TestMethodOrder(org.junit.jupiter.api.MethodOrderer.OrderAnnotation.class)
    static class Scoped {

        static volatile boolean launched;
        static final List<EmbeddedKafkaCluster> seen = new CopyOnWriteArrayList<>();

        @BeforeAll
        static void onlyWhenLaunched() {
            Assumptions.assumeTrue(launched, "run by KafkaClusterExtensionIT only");
        }

        @Test
        @org.junit.jupiter.api.Order(1)
        void failsWithAnOwnBroker(@OwnBroker EmbeddedKafkaCluster kafka) {
            seen.add(kafka);
            throw new AssertionError("failed on purpose");
        }

        @Test
        @org.junit.jupiter.api.Order(2)
        void stopsTheSharedBroker(EmbeddedKafkaCluster kafka) {
            seen.add(kafka);
            kafka.stopBroker();
        }

        @Test
        @org.junit.jupiter.api.Order(3)
        void getsAFreshSharedBroker(EmbeddedKafkaCluster kafka) {
            seen.add(kafka);
            assertThat(kafka.isRunning()).isTrue();
        }
    }
}
