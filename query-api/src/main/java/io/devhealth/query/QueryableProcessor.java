package io.devhealth.query;

import io.devhealth.processor.ProcessorClients;
import io.devhealth.processor.ProcessorConfig;
import io.devhealth.processor.StreamProcessorApp;
import io.devhealth.runtime.ops.HealthServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.state.HostInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The processor as it is deployed: Kafka Streams ({@link StreamProcessorApp}) with the query API over its stores, and
 * one operations endpoint ({@code http.port}: /metrics, /healthz, /readyz) for both. The launcher's {@code processor}
 * command runs this; tests, the demo and the benchmarks run the same.
 *
 * <p>The query port is bound before Kafka Streams is built: with port 0 its number is known only then, and every
 * instance must advertise it ({@code application.server}) for the others to forward to it.
 */
public final class QueryableProcessor implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(QueryableProcessor.class);

    private final StreamProcessorApp processor;
    private final QueryServer queryServer;
    private final QueryConfig queryConfig;
    private final HostInfo advertised;
    private HealthServer operations;

    public QueryableProcessor(ProcessorConfig processorConfig, QueryConfig queryConfig, ProcessorClients clients) {
        this.queryConfig = queryConfig;
        this.queryServer = QueryServer.bind(queryConfig.bindAddress(), queryConfig.port(), Clock.systemUTC(), queryConfig.security(),
                processorConfig.httpLimits());
        try {
            queryServer.issueNodeKeysFrom(processorConfig.clusterSecret());
            this.advertised = new HostInfo(advertisedHost(queryConfig), queryServer.port());
            this.processor = new StreamProcessorApp(processorConfig, clients, Optional.of(advertised));
        } catch (RuntimeException e) {
            queryServer.close();
            throw e;
        }
    }

    /** Every option of the processor with its query API: the processor's, then the query API's. */
    public static ConfigDef definition() {
        return QueryConfig.define(new ConfigDef(ProcessorConfig.DEFINITION));
    }

    /** The processor and its query API from one map of settings, as a deployment's environment gives both. */
    public static QueryableProcessor of(Map<String, ?> settings) {
        return new QueryableProcessor(new ProcessorConfig(settings), new QueryConfig(settings), new ProcessorClients());
    }

    private static String advertisedHost(QueryConfig config) {
        if (!config.advertisedHost().isEmpty()) {
            return config.advertisedHost();
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            LOGGER.warn("host name unknown, advertising loopback for queries error=\"{}\"", e.toString());
            return "127.0.0.1";
        }
    }

    /**
     * Starts Kafka Streams, then the query API over it and the operations endpoint.
     *
     * @throws io.devhealth.processor.MissingInputTopicsException when the cluster lacks an input topic; nothing was started then
     */
    public void start() {
        processor.start();
        queryServer.serve(processor.streams(), processor.admin(), processor.config().applicationId(), processor.meters(), advertised,
                queryConfig.standbyReads());
        ProcessorConfig config = processor.config();
        if (config.httpPort() >= 0) {
            operations = HealthServer.start(config.httpHost(), config.httpPort(), config.httpLimits(), processor.meters()::scrape,
                    () -> HealthServer.Check.ok("running"), processor::readiness);
        }
        LOGGER.info("processor serving queries queryPort={} advertised={}:{}", queryServer.port(), advertised.host(), advertised.port());
    }

    public KafkaStreams streams() {
        return processor.streams();
    }

    public PrometheusMeterRegistry meters() {
        return processor.meters();
    }

    /** Where this instance's query API listens (the port is the bound one when 0 was configured). */
    public HostInfo queryAddress() {
        return advertised;
    }

    /** The port of the operations endpoint ({@code http.port}: /metrics and probes), when it runs. */
    public Optional<Integer> httpPort() {
        return Optional.ofNullable(operations).map(HealthServer::port);
    }

    @Override
    public void close() {
        if (operations != null) {
            operations.close();
        }
        queryServer.close();
        processor.close();
    }
}
