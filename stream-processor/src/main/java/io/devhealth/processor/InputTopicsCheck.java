package io.devhealth.processor;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refuses to start the processor on a Kafka cluster that lacks one of the topology's input topics.
 * Kafka Streams itself starts there, logs {@code MissingSourceTopicException} and keeps running while
 * processing nothing, so a pod looks alive while no health moves; checked before it starts, the
 * missing topics are named at once and the process ends.
 *
 * <p>A cluster that cannot be asked (unreachable, too slow) is no reason to fail: the processor
 * starts without the check, as it did before it, and Kafka Streams waits for the brokers.
 */
public final class InputTopicsCheck {

    private static final Logger LOGGER = LoggerFactory.getLogger(InputTopicsCheck.class);

    private InputTopicsCheck() {}

    /**
     * @param required the topology's input topics ({@link DeviceHealthTopology#inputTopics})
     * @param timeout  how long to wait for the topic list before starting without the check
     * @throws MissingInputTopicsException naming every required topic the cluster does not list
     */
    public static void requireTopics(Admin admin, List<String> required, Duration timeout) {
        Set<String> existing;
        try {
            existing = admin.listTopics(new ListTopicsOptions().timeoutMs((int) timeout.toMillis())).names()
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            LOGGER.warn("input topics not checked: the topic list did not come, starting without the check timeoutMs={} error=\"{}\"",
                    timeout.toMillis(), e.getCause() == null ? e.toString() : e.getCause().toString());
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while listing topics", e);
        }
        List<String> missing = missing(required, existing);
        if (!missing.isEmpty()) {
            throw new MissingInputTopicsException(missing);
        }
        LOGGER.debug("input topics present topics={}", required);
    }

    /** The topics of {@code required} that {@code existing} lacks, in the order of {@code required}. */
    static List<String> missing(Collection<String> required, Set<String> existing) {
        return required.stream().filter(topic -> !existing.contains(topic)).toList();
    }
}
