package io.devhealth.query.access;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.devhealth.testkit.time.MutableClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ExpiringCacheTest {

    private final MutableClock clock = MutableClock.at("2026-11-29T10:00:00Z");

    @Test
    void shouldReuseAnAnswerUntilItExpires() {
        ExpiringCache<String, Integer> cache = new ExpiringCache<>(10, Duration.ofSeconds(10), clock);
        AtomicInteger loads = new AtomicInteger();

        assertThat(cache.get("k", key -> loads.incrementAndGet())).isEqualTo(1);
        clock.advance(Duration.ofSeconds(9));
        assertThat(cache.get("k", key -> loads.incrementAndGet())).isEqualTo(1);
        clock.advance(Duration.ofSeconds(1));
        assertThat(cache.get("k", key -> loads.incrementAndGet())).as("expired at the TTL").isEqualTo(2);
    }

    @Test
    void shouldKeepAtMostItsSizeDroppingTheLeastRecentlyUsed() {
        ExpiringCache<Integer, Integer> cache = new ExpiringCache<>(2, Duration.ofMinutes(1), clock);
        AtomicInteger loads = new AtomicInteger();
        cache.get(1, key -> loads.incrementAndGet());
        cache.get(2, key -> loads.incrementAndGet());
        cache.get(1, key -> loads.incrementAndGet());
        cache.get(3, key -> loads.incrementAndGet());

        assertThat(cache.size()).isEqualTo(2);
        assertThat(cache.get(1, key -> loads.incrementAndGet())).as("used recently, kept").isEqualTo(1);
        assertThat(cache.get(2, key -> loads.incrementAndGet())).as("least recently used, dropped and asked again").isEqualTo(4);
    }

    @Test
    void shouldNotKeepAFailure() {
        ExpiringCache<String, Integer> cache = new ExpiringCache<>(10, Duration.ofSeconds(10), clock);

        assertThatThrownBy(() -> cache.get("k", key -> {
            throw new IllegalStateException("down");
        })).hasMessage("down");
        assertThat(cache.get("k", key -> 7)).isEqualTo(7);
    }

    @Test
    void shouldAskOnceForConcurrentCallersOfOneKey() throws Exception {
        ExpiringCache<String, Integer> cache = new ExpiringCache<>(10, Duration.ofSeconds(10), clock);
        AtomicInteger loads = new AtomicInteger();
        CountDownLatch release = new CountDownLatch(1);
        ExecutorService callers = Executors.newFixedThreadPool(8);
        try {
            List<Future<Integer>> answers = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                answers.add(callers.submit(() -> cache.get("k", key -> {
                    loads.incrementAndGet();
                    try {
                        release.await(5, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return 42;
                })));
            }
            Thread.sleep(200);
            release.countDown();
            for (Future<Integer> answer : answers) {
                assertThat(answer.get(5, TimeUnit.SECONDS)).isEqualTo(42);
            }
        } finally {
            callers.shutdownNow();
        }
        assertThat(loads).hasValue(1);
    }

    @Test
    void shouldAskEveryTimeWithAZeroTtl() {
        ExpiringCache<String, Integer> cache = new ExpiringCache<>(10, Duration.ZERO, clock);
        AtomicInteger loads = new AtomicInteger();

        cache.get("k", key -> loads.incrementAndGet());
        cache.get("k", key -> loads.incrementAndGet());

        assertThat(loads).hasValue(2);
    }
}
