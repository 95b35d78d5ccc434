package io.devhealth.cli;

import io.devhealth.collector.CollectorConfig;
import io.devhealth.collector.NodeCollector;
import io.devhealth.processor.MissingInputTopicsException;
import io.devhealth.processor.ProcessorClients;
import io.devhealth.processor.ProcessorConfig;
import io.devhealth.query.QueryConfig;
import io.devhealth.query.QueryableProcessor;
import io.devhealth.runtime.config.ServiceConfig;
import io.devhealth.sink.SinkApp;
import io.devhealth.sink.SinkConfig;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The three long-running services. Each reads its typed configuration from DEVHEALTH_* variables and {@code --set}.
 * Exit codes: {@value #EXIT_STOPPED} stopped by a signal, {@value #EXIT_CONFIGURATION} configuration error, and the
 * processor's {@value #EXIT_MISSING_TOPICS} for an input topic missing from the Kafka cluster.
 */
final class ServiceCommands {

    static final int EXIT_STOPPED = 0;
    static final int EXIT_CONFIGURATION = 2;
    /** Distinct from a configuration error: the configuration is fine, the cluster is not ready for it. */
    static final int EXIT_MISSING_TOPICS = 3;

    private ServiceCommands() {}

    abstract static class ServiceCommand implements Callable<Integer> {

        @Option(names = "--set", paramLabel = "KEY=VALUE", description = "Set a configuration option (overrides the environment).")
        Map<String, String> overrides = new LinkedHashMap<>();

        @Option(names = "--help-config", description = "List every configuration option with its environment variable and default.")
        boolean helpConfig;

        @Spec
        CommandSpec spec;

        abstract ConfigDef definition();

        abstract AutoCloseable start(Map<String, String> env, Map<String, String> overrides) throws Exception;

        @Override
        public Integer call() throws Exception {
            if (helpConfig) {
                System.out.print(ServiceConfig.describe(definition()));
                return EXIT_STOPPED;
            }
            AutoCloseable service;
            try {
                service = start(System.getenv(), overrides);
            } catch (ConfigException e) {
                spec.commandLine().getErr().println("configuration error: " + e.getMessage());
                return EXIT_CONFIGURATION;
            } catch (MissingInputTopicsException e) {
                spec.commandLine().getErr().println("cannot start: " + e.getMessage());
                return EXIT_MISSING_TOPICS;
            }
            CountDownLatch stopped = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    service.close();
                } catch (Exception e) {
                    System.err.println("shutdown failed: " + e);
                } finally {
                    stopped.countDown();
                }
            }, "devhealth-shutdown"));
            stopped.await();
            return EXIT_STOPPED;
        }
    }

    @Command(name = "collector", mixinStandardHelpOptions = true,
            description = "Node-collector (DaemonSet): DRA health streams and kubelet allocations into Kafka.")
    static final class Collector extends ServiceCommand {
        @Override
        ConfigDef definition() {
            return CollectorConfig.DEFINITION;
        }

        @Override
        AutoCloseable start(Map<String, String> env, Map<String, String> overrides) {
            NodeCollector collector = NodeCollector.create(CollectorConfig.fromEnvironment(env, overrides), Clock.systemUTC());
            collector.start();
            return collector;
        }
    }

    @Command(name = "processor", mixinStandardHelpOptions = true,
            description = "Stream-processor (Kafka Streams): joins health to allocations, emits pod status and transitions; "
                    + "serves the query API over its state.",
            exitCodeListHeading = "Exit codes:%n",
            exitCodeList = {EXIT_STOPPED + ":stopped by a signal", EXIT_CONFIGURATION + ":configuration error",
                    EXIT_MISSING_TOPICS + ":an input topic is missing from the Kafka cluster (" + MissingInputTopicsException.TOPICS_FILE
                            + " lists them)"})
    static final class Processor extends ServiceCommand {
        /** The processor's options and the query API's: both run in this one process. */
        @Override
        ConfigDef definition() {
            return QueryableProcessor.definition();
        }

        @Override
        AutoCloseable start(Map<String, String> env, Map<String, String> overrides) {
            QueryableProcessor app = new QueryableProcessor(ProcessorConfig.fromEnvironment(env, overrides),
                    QueryConfig.fromEnvironment(env, overrides), new ProcessorClients());
            try {
                app.start();
            } catch (RuntimeException e) {
                // Built but not started: its query port, clients and Kafka Streams instance are released here.
                app.close();
                throw e;
            }
            return app;
        }
    }

    @Command(name = "sink", mixinStandardHelpOptions = true,
            description = "Sink-apiserver: writes device health into pod status.")
    static final class Sink extends ServiceCommand {
        @Override
        ConfigDef definition() {
            return SinkConfig.DEFINITION;
        }

        @Override
        AutoCloseable start(Map<String, String> env, Map<String, String> overrides) {
            SinkApp app = new SinkApp(SinkConfig.fromEnvironment(env, overrides));
            app.start();
            return app;
        }
    }
}
