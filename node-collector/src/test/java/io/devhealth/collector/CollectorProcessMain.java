package io.devhealth.collector;

import java.time.Clock;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/** The collector alone in its JVM, configured from DEVHEALTH_* variables, for {@link CollectorLoadBenchmarkIT}. */
public final class CollectorProcessMain {

    private CollectorProcessMain() {}

    public static void main(String[] args) throws InterruptedException {
        NodeCollector collector = NodeCollector.create(CollectorConfig.fromEnvironment(System.getenv(), Map.of()), Clock.systemUTC());
        collector.start();
        Runtime.getRuntime().addShutdownHook(new Thread(collector::close));
        new CountDownLatch(1).await();
    }
}
