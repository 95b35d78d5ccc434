package io.devhealth.sink.postmortem;

import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The terminated pods whose record the sink wrote, as the sink last read them, until their
 * termination window ends: a pod deleted within its window (Job controllers and
 * {@code ttlSecondsAfterFinished} delete pods quickly) can then still have a late report checked
 * against its identity (uid, node, claims) and applied to its record.
 *
 * <p>Bounded: the oldest entries go first once {@code capacity} pods are kept, and an entry is
 * dropped once its window has ended. Only memory: after a restart of the sink, a late report for a
 * pod deleted before the restart is not applied (the record keeps what it had). Thread-safe.
 */
public final class RecentlyTerminated {

    /**
     * Pods terminated within one window that a sink instance keeps (a Pod object is a few KiB, so a
     * few MiB in all): far more than terminate within the default two minutes on a large cluster.
     */
    public static final int DEFAULT_CAPACITY = 2_000;

    private final Duration window;
    private final Map<String, Pod> pods;

    public RecentlyTerminated(Duration window, int capacity) {
        this.window = window;
        this.pods = new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Pod> eldest) {
                return size() > capacity;
            }
        };
    }

    /**
     * Keeps {@code pod} (terminated: every container finished) under {@code key}, replacing an earlier
     * copy, and drops the oldest copies whose window has ended at {@code now}.
     */
    public synchronized void put(String key, Pod pod, Instant now) {
        pods.remove(key);
        pods.put(key, pod);
        Iterator<Map.Entry<String, Pod>> oldest = pods.entrySet().iterator();
        while (oldest.hasNext() && !inWindow(oldest.next().getValue(), now)) {
            oldest.remove();
        }
    }

    /** The pod kept under {@code key} if its window has not ended at {@code now}. */
    public synchronized Pod get(String key, Instant now) {
        Pod pod = pods.get(key);
        if (pod == null) {
            return null;
        }
        if (!inWindow(pod, now)) {
            pods.remove(key);
            return null;
        }
        return pod;
    }

    private boolean inWindow(Pod pod, Instant now) {
        Optional<Instant> finishedAt = TerminatedDeviceHealth.podFinishedAt(pod);
        return finishedAt.isPresent() && now.isBefore(finishedAt.get().plus(window));
    }
}
