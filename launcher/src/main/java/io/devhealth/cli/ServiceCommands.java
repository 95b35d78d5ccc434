package io.devhealth.cli;

import io.devhealth.collector.CollectorConfig;
import io.devhealth.collector.NodeCollector;
import io.devhealth.processor.ProcessorConfig;
import io.devhealth.processor.StreamProcessorApp;
import io.devhealth.schema.config.ServiceConfig;
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
import picocli.CommandLine.Option;

/** The three long-running services. Each reads its typed configuration from DEVHEALTH_* variables and {@code --set}. */
final class ServiceCommands {

    private ServiceCommands() {}

    abstract static class ServiceCommand implements Callable<Integer> {

        @Option(names = "--set", paramLabel = "KEY=VALUE", description = "Set a configuration option (overrides the environment).")
        Map<String, String> overrides = new LinkedHashMap<>();

        @Option(names = "--help-config", description = "List every configuration option with its environment variable and default.")
        boolean helpConfig;

        abstract ConfigDef definition();

        abstract AutoCloseable start(Map<String, String> env, Map<String, String> overrides) throws Exception;

        @Override
        public Integer call() throws Exception {
            if (helpConfig) {
                System.out.print(ServiceConfig.describe(definition()));
                return 0;
            }
            AutoCloseable service;
            try {
                service = start(System.getenv(), overrides);
            } catch (ConfigException e) {
                System.err.println("configuration error: " + e.getMessage());
                return 2;
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
            return 0;
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
            description = "Stream-processor (Kafka Streams): joins health to allocations, emits pod status and transitions.")
    static final class Processor extends ServiceCommand {
        @Override
        ConfigDef definition() {
            return ProcessorConfig.DEFINITION;
        }

        @Override
        AutoCloseable start(Map<String, String> env, Map<String, String> overrides) {
            StreamProcessorApp app = new StreamProcessorApp(ProcessorConfig.fromEnvironment(env, overrides));
            app.start();
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
