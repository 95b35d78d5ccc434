package io.devhealth.query.access;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

/**
 * A small bounded cache of answers that expire: at most {@code maxEntries}, the least recently used
 * dropped first, each reused for {@code ttl} after it was asked for. Concurrent callers of one missing key
 * wait for the first one's answer instead of each asking (a burst of identical queries asks once). A
 * failure is not kept: the next caller asks again.
 */
public final class ExpiringCache<K, V> {

    private record Entry<V>(CompletableFuture<V> value, Instant expires) {}

    private final int maxEntries;
    private final Duration ttl;
    private final Clock clock;
    private final Map<K, Entry<V>> entries;

    public ExpiringCache(int maxEntries, Duration ttl, Clock clock) {
        this.maxEntries = maxEntries;
        this.ttl = ttl;
        this.clock = clock;
        this.entries = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<K, Entry<V>> eldest) {
                return size() > ExpiringCache.this.maxEntries;
            }
        };
    }

    /** The answer for {@code key}, asked of {@code load} when none is kept or it expired; rethrows what {@code load} threw. */
    public V get(K key, Function<K, V> load) {
        CompletableFuture<V> mine;
        Entry<V> found;
        synchronized (entries) {
            found = entries.get(key);
            Instant now = clock.instant();
            if (found != null && now.isBefore(found.expires())) {
                mine = null;
            } else {
                mine = new CompletableFuture<>();
                found = new Entry<>(mine, now.plus(ttl));
                if (ttl.isZero()) {
                    entries.remove(key);
                } else {
                    entries.put(key, found);
                }
            }
        }
        if (mine != null) {
            try {
                mine.complete(load.apply(key));
            } catch (RuntimeException e) {
                forget(key, found);
                mine.completeExceptionally(e);
                throw e;
            }
        }
        try {
            return found.value().join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException cause ? cause : e;
        }
    }

    private void forget(K key, Entry<V> entry) {
        synchronized (entries) {
            entries.remove(key, entry);
        }
    }

    int size() {
        synchronized (entries) {
            return entries.size();
        }
    }
}
