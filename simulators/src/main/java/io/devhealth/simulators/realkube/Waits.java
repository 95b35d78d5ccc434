package io.devhealth.simulators.realkube;

import io.devhealth.simulators.process.ManagedProcess;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Polls until a component is ready, failing early when it has died and with its log when it never is. */
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
}
