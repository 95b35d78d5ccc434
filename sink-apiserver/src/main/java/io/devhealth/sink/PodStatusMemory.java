package io.devhealth.sink;

import io.devhealth.schema.avro.PodDeviceStatus;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The last device status the sink received for each pod, bounded: the least recently used pods are
 * forgotten first. Needed because a pod can terminate without any new status arriving; the sink then
 * writes the last one it has (as of the container's finishedAt) and freezes it. What is forgotten is
 * not lost: the pod itself holds what was written, and Kafka the history.
 *
 * <p>Thread-safe; all methods are short and synchronized.
 */
final class PodStatusMemory {

    /** What the sink knows about one pod. */
    record Entry(PodDeviceStatus lastStatus, long appliedVersion, boolean frozen) {
    }

    private final LinkedHashMap<String, Entry> entries;

    PodStatusMemory(int maxPods) {
        this.entries = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Entry> eldest) {
                return size() > maxPods;
            }
        };
    }

    static String key(PodDeviceStatus status) {
        return status.getPod().getNamespace() + "/" + status.getPod().getName();
    }

    synchronized Optional<Entry> get(String pod) {
        return Optional.ofNullable(entries.get(pod));
    }

    /** The status was written (or found already in place). */
    synchronized void applied(PodDeviceStatus status) {
        Entry old = entries.get(key(status));
        entries.put(key(status), new Entry(status, status.getVersion(), old != null && old.frozen()));
    }

    /** The pod's status is final; later statuses are skipped without reading the pod. */
    synchronized void frozen(String pod) {
        Entry old = entries.get(pod);
        entries.put(pod, new Entry(old == null ? null : old.lastStatus(), old == null ? -1 : old.appliedVersion(), true));
    }

    synchronized void forget(String pod) {
        entries.remove(pod);
    }

    synchronized int size() {
        return entries.size();
    }
}
