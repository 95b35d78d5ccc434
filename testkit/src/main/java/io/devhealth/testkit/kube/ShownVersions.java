package io.devhealth.testkit.kube;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every version a pod condition showed, per pod, as a watch of the pods of one namespace saw them: tests
 * give each status they send a version and put it in a device message ({@code #<n>}), which the
 * condition's message repeats; this records the {@code #<n>} of the condition in the order the API server
 * showed it, a version shown again right after itself recorded once. A write that took a pod back to an
 * older status shows as a list that is not sorted.
 */
public final class ShownVersions implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(ShownVersions.class);
    private static final Pattern VERSION = Pattern.compile("#(\\d+)");

    private final String conditionType;
    private final Map<String, List<Long>> byPod = new ConcurrentHashMap<>();
    private final Watch watch;

    private ShownVersions(KubernetesClient client, String namespace, String conditionType) {
        this.conditionType = conditionType;
        this.watch = client.pods().inNamespace(namespace).watch(new Watcher<>() {
            @Override
            public void eventReceived(Action action, Pod pod) {
                version(pod).ifPresent(version -> record(pod.getMetadata().getName(), version));
            }

            @Override
            public void onClose(WatcherException cause) {
                LOGGER.warn("pod watch closed namespace={} error=\"{}\"", namespace, cause.getMessage());
            }
        });
    }

    /** Starts watching the pods of {@code namespace} for the condition of type {@code conditionType}. */
    public static ShownVersions watch(KubernetesClient client, String namespace, String conditionType) {
        return new ShownVersions(client, namespace, conditionType);
    }

    /** The version the pod's condition shows ({@code #<n>} in its message), if it has that condition and a version in it. */
    public Optional<Long> version(Pod pod) {
        if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
            return Optional.empty();
        }
        return pod.getStatus().getConditions().stream().filter(c -> conditionType.equals(c.getType()))
                .map(PodCondition::getMessage).map(message -> VERSION.matcher(String.valueOf(message))).filter(Matcher::find)
                .map(m -> Long.parseLong(m.group(1))).findFirst();
    }

    private void record(String pod, long version) {
        List<Long> versions = byPod.computeIfAbsent(pod, k -> new ArrayList<>());
        synchronized (versions) {
            if (versions.isEmpty() || versions.get(versions.size() - 1) != version) {
                versions.add(version);
            }
        }
    }

    /** A copy of what was seen so far: per pod name, the versions in the order shown. */
    public Map<String, List<Long>> byPod() {
        Map<String, List<Long>> copy = new TreeMap<>();
        byPod.forEach((pod, versions) -> {
            synchronized (versions) {
                copy.put(pod, List.copyOf(versions));
            }
        });
        return copy;
    }

    /** How many times a version other than the one shown before appeared, all pods together. */
    public long changes() {
        return byPod().values().stream().mapToLong(List::size).sum();
    }

    @Override
    public void close() {
        watch.close();
    }
}
