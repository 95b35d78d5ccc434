package io.devhealth.faults;

import io.devhealth.processor.ProcessorConfig;
import io.devhealth.query.QueryConfig;
import io.devhealth.query.QueryableProcessor;
import io.devhealth.query.access.QuerySecurityConfig;
import io.devhealth.runtime.config.ServiceConfig;
import io.devhealth.schema.Topics;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.streams.KafkaStreams;

/**
 * The stream-processor in its own JVM, for {@link ProcessorKillIT} and {@link ProcessorScaleOutIT}:
 * exactly the production {@link QueryableProcessor}, with the shared schema ids registered first.
 * Prints {@code devhealth-processor-state RUNNING} when Kafka Streams runs; runs until killed, and
 * closes the processor on SIGTERM as a pod's container does.
 *
 * <p>Arguments: bootstrap servers, registry name, state directory, application id; then, optional,
 * the member name (its {@code group.instance.id} is {@code <application id>-<member>}, default
 * {@code 0}; {@value #DYNAMIC_MEMBER} for dynamic membership), the query port (default 0: any free
 * one) and {@code num.standby.replicas} (default: Kafka Streams' own, 0). Any processor option can also be
 * given as a system property {@value #OPTION_PREFIX}{@code <option>} (e.g. {@code -Ddevhealth.processor.stream.threads=2}),
 * over what the arguments set.
 */
public final class ProcessorProcessMain {

    static final String RUNNING_LINE = "devhealth-processor-state RUNNING";
    /** Long enough that no device goes silent during the test: the oracle has no expiries. */
    static final String TIMEOUT_SECONDS = "86400";
    /** As the member name: no {@code group.instance.id}, so that a closing instance leaves the group at once. */
    static final String DYNAMIC_MEMBER = "-";
    /** Prefix of the system properties that set a processor option: {@code -Ddevhealth.processor.<option>=<value>}. */
    static final String OPTION_PREFIX = "devhealth.processor.";

    private ProcessorProcessMain() {}

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String registryName = args[1];
        SharedSchemaIds.registerAll(registryName, Topics.withDefaultPrefix());
        Map<String, String> settings = new HashMap<>();
        settings.put(ProcessorConfig.BOOTSTRAP_SERVERS, bootstrap);
        settings.put(ProcessorConfig.SCHEMA_REGISTRY_URL, "mem://" + registryName);
        settings.put(ProcessorConfig.STATE_DIR, args[2]);
        settings.put(ProcessorConfig.APPLICATION_ID, args[3]);
        settings.put(ProcessorConfig.TIMEOUT_DEFAULT, TIMEOUT_SECONDS);
        // The oracle expects one transition per change, and the load flips devices at random: no flap damping.
        settings.put(ProcessorConfig.FLAP_THRESHOLD, "0");
        settings.put(ProcessorConfig.ROCKSDB_MEMORY, Long.toString(32L << 20));
        settings.put(QueryConfig.BIND_ADDRESS, "127.0.0.1");
        settings.put(QueryConfig.PORT, args.length > 5 ? args[5] : "0");
        settings.put(QueryConfig.ADVERTISED_HOST, "127.0.0.1");
        settings.put(QuerySecurityConfig.INSECURE, "true");
        // Static membership by default, as a StatefulSet pod should run: the restarted instance takes
        // over its partitions at once instead of waiting for the killed member's session to time out.
        String member = args.length > 4 ? args[4] : "0";
        if (!member.equals(DYNAMIC_MEMBER)) {
            settings.put(ServiceConfig.KAFKA_PREFIX + "group.instance.id", args[3] + "-" + member);
        }
        settings.put(ServiceConfig.KAFKA_PREFIX + "session.timeout.ms", "10000");
        if (args.length > 6) {
            settings.put(ServiceConfig.KAFKA_PREFIX + "num.standby.replicas", args[6]);
        }
        System.getProperties().stringPropertyNames().stream().filter(name -> name.startsWith(OPTION_PREFIX))
                .forEach(name -> settings.put(name.substring(OPTION_PREFIX.length()), System.getProperty(name)));
        QueryableProcessor app = QueryableProcessor.of(settings);
        app.streams().setStateListener((next, previous) -> {
            if (next == KafkaStreams.State.RUNNING) {
                System.out.println(RUNNING_LINE);
                System.out.flush();
            }
        });
        Runtime.getRuntime().addShutdownHook(new Thread(app::close, "processor-shutdown"));
        app.start();
        Thread.currentThread().join();
    }
}
