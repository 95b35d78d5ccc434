package io.devhealth.processor.internals.rules;

import io.devhealth.schema.HealthWords;
import io.devhealth.schema.PodHealth;
import io.devhealth.schema.avro.HealthStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Flap damping of one source's word about one device: either the source is {@link Counting} its
 * recent changes of health, or it is {@link Held} at one word. A source that changes its word more
 * than {@link FlapLimits#flips()} times within {@link FlapLimits#window()} is held at the least healthy
 * word of the flapping (reason {@value #REASON_FLAPPING}, one constant message) until it has been
 * quiet, without a change, for {@link FlapLimits#quiet()}; then its latest word shows again. One
 * transition when the hold starts, one when it ends, none for the flips between: a GPU that flaps ten
 * times a second must not flood the transition feed, the pod records and the history.
 */
public sealed interface Flaps permits Flaps.Counting, Flaps.Held {

    /** Reason code of a device held by flap damping. */
    String REASON_FLAPPING = "Flapping";

    /**
     * A source that is not held: the node times of its latest changes, oldest first, at most
     * {@link FlapLimits#flips()} of them, all within the window of the latest. Times that fell out of the
     * window stay until the next change drops them: the list is bounded by the threshold either way.
     */
    record Counting(List<Long> recent) implements Flaps {
        public Counting {
            recent = List.copyOf(recent);
        }
    }

    /**
     * A source held by damping since node time {@code since}.
     *
     * @param health the health shown while held
     * @param message the message shown while held (constant for the whole hold)
     * @param flips changes of the source's word since the hold started, the one that started it included
     * @param releaseAt node time at which the hold ends unless the source changes its word again
     */
    record Held(long since, HealthStatus health, String message, int flips, long releaseAt) implements Flaps {
        public Held {
            Objects.requireNonNull(health, "health");
            Objects.requireNonNull(message, "message");
        }
    }

    /**
     * The flaps after the source's word changed from {@code from} to {@code to} at {@code at}, or null
     * when damping is off.
     *
     * @param before the flaps before (null: no change within the window yet)
     * @param label how the source is named in the hold's message
     */
    static Flaps afterChange(Flaps before, long at, HealthStatus from, HealthStatus to, FlapLimits limits, String label) {
        if (!limits.enabled()) {
            return null;
        }
        if (before instanceof Held held) {
            // Held: every change extends the hold, and a worse word than the one held is held instead.
            HealthStatus health = PodHealth.worse(held.health(), to);
            String message = health == held.health() ? held.message() : message(label, health, limits);
            return new Held(held.since(), health, message, held.flips() + 1, at + limits.quietMs());
        }
        List<Long> recent = new ArrayList<>(limits.flips() + 1);
        if (before instanceof Counting counting) {
            for (long time : counting.recent()) {
                if (at - time < limits.windowMs()) {
                    recent.add(time);
                }
            }
        }
        recent.add(at);
        if (recent.size() > limits.flips()) {
            HealthStatus health = PodHealth.worse(from, to);
            return new Held(at, health, message(label, health, limits), 1, at + limits.quietMs());
        }
        return new Counting(recent);
    }

    /** These flaps as they are at node time {@code at}: null once a hold is over, the source having been quiet long enough. */
    static Flaps at(Flaps flaps, long at) {
        return flaps instanceof Held held && at >= held.releaseAt() ? null : flaps;
    }

    private static String message(String label, HealthStatus held, FlapLimits limits) {
        return "flapping: " + label + " changed health more than " + limits.flips() + " times within "
                + limits.window().toSeconds() + " s; held " + HealthWords.of(held) + " until it is quiet for " + limits.quiet().toSeconds() + " s";
    }
}
