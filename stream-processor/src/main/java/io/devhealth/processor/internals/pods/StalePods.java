package io.devhealth.processor.internals.pods;

import io.devhealth.processor.internals.stores.StateKeys;
import io.devhealth.schema.avro.PodAllocation;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The pods whose status is to be rebuilt and emitted before the next commit, by node, in the order
 * they first went stale.
 *
 * <p>Why not emit at once: a pod's status covers all its devices, and a fleet-wide event changes many
 * of them within one commit interval (an 8-GPU pod on a node that lost power; a node's allocations
 * followed by its devices' first reports). Emitted on every change, each status was rebuilt, encoded,
 * written, sent and claimed once per device; marked here, it is once per commit. What is merged is
 * changes of different devices only: a device that changes again while its pod is stale from its
 * previous change has that status emitted first ({@link #takeIfChangedBy}), so that the pod's history shows
 * every state each of its devices was in, as before. The allocation each pod was marked with is kept:
 * the processor emits a node's stale pods before it applies the node's next allocations, so the
 * allocation is still the node's when the status is built.
 *
 * <p>In memory only: the statuses are emitted before the commit whose offsets cover the records that
 * made them stale, and an aborted transaction ({@link #clear}) replays those records, which mark them
 * again.
 */
public final class StalePods {

    /**
     * A pod to rebuild: its allocation, the time of the latest change that reached it, and the devices
     * (by state key) whose changes did.
     */
    public static final class Stale {
        private final PodAllocation pod;
        private long at;
        private final Set<String> devices = new HashSet<>();

        private Stale(PodAllocation pod, long at) {
            this.pod = pod;
            this.at = at;
        }

        public PodAllocation pod() {
            return pod;
        }

        public long at() {
            return at;
        }
    }

    private final Map<String, Map<String, Stale>> byNode = new LinkedHashMap<>();

    /**
     * Marks {@code pod} of {@code node} stale because of a change at {@code at}.
     *
     * @param device the state key of the device whose change reached the pod; null for a change of the
     *               node's allocations or inventory
     */
    public void mark(String node, PodAllocation pod, long at, String device) {
        String key = StateKeys.pod(pod.getNamespace(), pod.getName());
        Stale stale = byNode.computeIfAbsent(node, n -> new LinkedHashMap<>()).computeIfAbsent(key, k -> new Stale(pod, at));
        stale.at = Math.max(stale.at, at);
        if (device != null) {
            stale.devices.add(device);
        }
    }

    /**
     * Removes and returns pod {@code podKey} of {@code node} when it is stale from a change of
     * {@code device}; null when it is not stale, or stale from other changes only (it stays marked).
     */
    public Stale takeIfChangedBy(String node, String podKey, String device) {
        Map<String, Stale> pods = byNode.get(node);
        Stale stale = pods == null ? null : pods.get(podKey);
        if (stale == null || !stale.devices.contains(device)) {
            return null;
        }
        pods.remove(podKey);
        if (pods.isEmpty()) {
            byNode.remove(node);
        }
        return stale;
    }

    /** Removes and returns {@code node}'s stale pods, by {@link StateKeys#pod} key. */
    public Map<String, Stale> take(String node) {
        Map<String, Stale> pods = byNode.remove(node);
        return pods == null ? Map.of() : pods;
    }

    /** The nodes with stale pods, in the order they got their first. */
    public Collection<String> nodes() {
        return List.copyOf(byNode.keySet());
    }

    public boolean isEmpty() {
        return byNode.isEmpty();
    }

    /** Forgets everything: the transaction the changes belonged to was aborted. */
    public void clear() {
        byNode.clear();
    }
}
