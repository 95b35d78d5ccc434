package io.devhealth.bench;

import io.devhealth.processor.RestoreProgress;
import io.devhealth.query.QueryableProcessor;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.processor.TaskId;

/**
 * Waits on several processor instances of one application in this JVM, as the benchmarks that start
 * more than one need: until their group has settled and every task they were given is restored.
 */
final class ProcessorInstances {

    private ProcessorInstances() {}

    /** Until every instance runs, restores nothing and holds an active task. */
    static void awaitReady(List<QueryableProcessor> apps) throws Exception {
        awaitUntil("ready", () -> ready(apps));
    }

    /** As {@link #awaitReady(List)}, and until the instances hold {@code tasks} distinct active tasks between them. */
    static void awaitReady(List<QueryableProcessor> apps, int tasks) throws Exception {
        awaitUntil("ready", () -> ready(apps) && activeTaskIds(apps).size() == tasks);
    }

    private static boolean ready(List<QueryableProcessor> apps) {
        return apps.stream().allMatch(app -> app.streams().state() == KafkaStreams.State.RUNNING
                && gauge(app, RestoreProgress.RESTORE_PARTITIONS) == 0 && activeTasks(app) > 0);
    }

    static void awaitUntil(String what, BooleanSupplier condition) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(30).toNanos();
        // A few polls in a row: a rebalance can pass through RUNNING before it hands out the last tasks.
        int inARow = 0;
        while (inARow < 3) {
            inARow = condition.getAsBoolean() ? inARow + 1 : 0;
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not " + what + " within 30 minutes");
            }
            Thread.sleep(50);
        }
    }

    static int activeTasks(QueryableProcessor app) {
        return activeTaskIds(List.of(app)).size();
    }

    /** The active tasks the stream threads of {@code apps} hold, each once. */
    static Set<TaskId> activeTaskIds(List<QueryableProcessor> apps) {
        Set<TaskId> tasks = new HashSet<>();
        apps.forEach(app -> app.streams().metadataForLocalThreads().forEach(thread -> thread.activeTasks()
                .forEach(task -> tasks.add(task.taskId()))));
        return tasks;
    }

    static double gauge(QueryableProcessor app, String name) {
        return app.meters().get(name).gauge().value();
    }
}
