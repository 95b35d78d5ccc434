package io.devhealth.faults;

import io.devhealth.runtime.config.ServiceConfig;
import io.devhealth.schema.Topics;
import io.devhealth.sink.SinkApp;
import io.devhealth.sink.SinkConfig;
import io.fabric8.kubernetes.client.Config;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;

/**
 * One sink-apiserver replica in its own JVM, for {@link SinkKillIT}: exactly the production {@link SinkApp}, with the
 * shared schema ids registered first, reaching the API server as a kubeconfig says (the sink's ServiceAccount, so
 * that its shipped RBAC, admission policies and priority level apply). Runs until killed, and closes the sink on
 * SIGTERM as a pod's container does.
 *
 * <p>Arguments: bootstrap servers, registry name, topic prefix, consumer group, kubeconfig file. Its consumer's
 * session times out after {@value #SESSION_TIMEOUT_MS} ms, so that a killed replica's partitions move to the others
 * within a short test. Any sink option can also be given as a system property {@value #OPTION_PREFIX}{@code <option>}
 * (e.g. {@code -Ddevhealth.sink.write.concurrency=4}), over what the arguments set.
 */
public final class SinkProcessMain {

    /** Prefix of the system properties that set a sink option: {@code -Ddevhealth.sink.<option>=<value>}. */
    static final String OPTION_PREFIX = "devhealth.sink.";
    /** The broker's smallest allowed session timeout ({@code group.min.session.timeout.ms}'s default). */
    static final String SESSION_TIMEOUT_MS = "6000";

    private SinkProcessMain() {}

    public static void main(String[] args) throws Exception {
        String registryName = args[1];
        Topics topics = new Topics(args[2]);
        SharedSchemaIds.registerAll(registryName, topics);
        Map<String, String> settings = new HashMap<>();
        settings.put(SinkConfig.BOOTSTRAP_SERVERS, args[0]);
        settings.put(SinkConfig.SCHEMA_REGISTRY_URL, "mem://" + registryName);
        settings.put(SinkConfig.TOPIC_PREFIX, topics.prefix());
        settings.put(SinkConfig.GROUP_ID, args[3]);
        settings.put(ServiceConfig.KAFKA_PREFIX + "session.timeout.ms", SESSION_TIMEOUT_MS);
        settings.put(ServiceConfig.KAFKA_PREFIX + "heartbeat.interval.ms", "1000");
        // A pod set aside by a failed request is tried again within a second, not the production 30 s.
        settings.put(SinkConfig.RETRY_INITIAL_INTERVAL_MS, "100");
        settings.put(SinkConfig.RETRY_MAX_INTERVAL_MS, "1000");
        System.getProperties().stringPropertyNames().stream().filter(name -> name.startsWith(OPTION_PREFIX))
                .forEach(name -> settings.put(name.substring(OPTION_PREFIX.length()), System.getProperty(name)));
        Config apiServer = Config.fromKubeconfig(Files.readString(Path.of(args[4])));
        SinkApp app = new SinkApp(new SinkConfig(settings), new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), Clock.systemUTC(),
                apiServer);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                app.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "sink-shutdown"));
        app.start();
        Thread.currentThread().join();
    }
}
