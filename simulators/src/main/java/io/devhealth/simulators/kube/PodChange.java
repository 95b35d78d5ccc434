package io.devhealth.simulators.kube;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * One stored pod change seen by a {@link PodChangeListener}: what happened, the pod after it (for a
 * delete: the last state, with the delete's resourceVersion) and the {@link System#nanoTime()} at which
 * the server applied it. The pod is decoded only when {@link #pod()} is first called.
 */
public final class PodChange {

    private final Watcher.Action action;
    private final StoredObject stored;
    private final long appliedAtNanos;
    private final KubernetesSerialization serialization;
    private Pod pod;

    PodChange(Watcher.Action action, StoredObject stored, long appliedAtNanos, KubernetesSerialization serialization) {
        this.action = action;
        this.stored = stored;
        this.appliedAtNanos = appliedAtNanos;
        this.serialization = serialization;
    }

    /** @return ADDED (created), MODIFIED or DELETED */
    public Watcher.Action action() {
        return action;
    }

    public String namespace() {
        return stored.namespace();
    }

    public String name() {
        return stored.name();
    }

    public long resourceVersion() {
        return stored.resourceVersion();
    }

    /** @return {@code status.phase} after the change, or null */
    public String phase() {
        return stored.fields().get("status.phase");
    }

    /** @return {@link System#nanoTime()} when the change was applied (before any watcher was told) */
    public long appliedAtNanos() {
        return appliedAtNanos;
    }

    /** @return the pod after the change (decoded on first call; the same instance afterwards) */
    public synchronized Pod pod() {
        if (pod == null) {
            pod = serialization.unmarshal(stored.text(), Pod.class);
        }
        return pod;
    }
}
