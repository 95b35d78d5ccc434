package io.devhealth.simulators.realkube;

import io.devhealth.simulators.process.ManagedProcess;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Polls until a component is ready, failing early when it has died and with its log when it never is;
 * or until an object in the API server is as expected.
 */
public final class Waits {

    private Waits() {}

    /** Polls {@code ready} every 200 ms; {@code process}, when not null, is the component whose death ends the wait. */
    public static void until(String what, Duration timeout, ManagedProcess process, BooleanSupplier ready) {
        long deadline = System.nanoTime() + timeout.toNanos();
        RuntimeException last = null;
        while (System.nanoTime() < deadline) {
            if (process != null) {
                process.requireAlive();
            }
            try {
                if (ready.getAsBoolean()) {
                    return;
                }
            } catch (RuntimeException e) {
                last = e;
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted waiting for " + what, e);
            }
        }
        String logTail = process == null ? "" : "\nthe end of " + process.log() + ":\n" + process.tail(40);
        throw new IllegalStateException("not ready after " + timeout.toSeconds() + " s: " + what
                + (last == null ? "" : " (last error: " + last + ")") + logTail, last);
    }

    /** Polls {@code probe} every 200 ms until it gives a value, and returns it; fails after {@code timeout}. */
    public static <T> T value(String what, Duration timeout, Supplier<Optional<T>> probe) {
        AtomicReference<T> found = new AtomicReference<>();
        until(what, timeout, null, () -> {
            probe.get().ifPresent(found::set);
            return found.get() != null;
        });
        return found.get();
    }
}
