package io.devhealth.sink;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Terminated pods the sink still has to act on without a new status arriving: write their last status
 * as of termination (as soon as they terminate) and freeze them once the post-termination window has
 * passed. Bounded like {@link PodStatusMemory}; thread-safe (the pod watcher adds, the sink takes).
 */
final class TerminationSchedule {

    /** One pod's pending actions. {@code writeDue}: null when only the freeze is left. */
    record Entry(String namespace, String name, Instant writeDue, Instant freezeDue) {
        String key() {
            return namespace + "/" + name;
        }
    }

    private final LinkedHashMap<String, Entry> entries;

    TerminationSchedule(int maxPods) {
        this.entries = new LinkedHashMap<>() {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Entry> eldest) {
                return size() > maxPods;
            }
        };
    }

    /** Freeze at {@code freezeDue}; also write the last status at {@code writeDue} when not null. */
    synchronized void schedule(String namespace, String name, Instant writeDue, Instant freezeDue) {
        String key = namespace + "/" + name;
        Entry old = entries.get(key);
        Instant write = writeDue != null ? writeDue : old == null ? null : old.writeDue();
        entries.put(key, new Entry(namespace, name, write, freezeDue));
    }

    /** The actions due at {@code now}; freezes only when {@code mayFreeze}. */
    synchronized List<Entry> due(Instant now, boolean mayFreeze) {
        List<Entry> due = new ArrayList<>();
        for (Entry entry : entries.values()) {
            boolean write = entry.writeDue() != null && !now.isBefore(entry.writeDue());
            boolean freeze = mayFreeze && !now.isBefore(entry.freezeDue());
            if (write || freeze) {
                due.add(entry);
            }
        }
        return due;
    }

    /** The write at termination was done; only the freeze is left. */
    synchronized void written(String key) {
        Entry old = entries.get(key);
        if (old != null) {
            entries.put(key, new Entry(old.namespace(), old.name(), null, old.freezeDue()));
        }
    }

    synchronized void remove(String key) {
        entries.remove(key);
    }

    synchronized boolean contains(String key) {
        return entries.containsKey(key);
    }

    synchronized int size() {
        return entries.size();
    }
}
