package io.devhealth.processor.internals;

import io.devhealth.schema.avro.HealthStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A source's recent changes of health about one device and, while it flaps, the word the device is
 * held at: flap damping. A source that changes its word more than {@link FlapLimits#flips()} times
 * within {@link FlapLimits#window()} is held at the least healthy word of the flapping (reason
 * {@value #REASON_FLAPPING}, one constant message) until it has been quiet, without a change, for
 * {@link FlapLimits#quiet()}; then its latest word shows again. One transition when the hold starts,
 * one when it ends, none for the flips between: a GPU that flaps ten times a second must not flood
 * the transition feed, the pod records and the history.
 *
 * @param recent node times of the latest changes, oldest first, at most {@link FlapLimits#flips()}
 *               of them, all within the window of the latest
 * @param heldSince node time the hold started; 0 while the source is not held
 * @param held the health shown while held
 * @param heldMessage the message shown while held (constant for the whole hold)
 * @param flipsWhileHeld changes of the source's word since the hold started, the one that started it included
 * @param releaseAt node time at which the hold ends unless the source changes its word again
 */
public record Flaps(List<Long> recent, long heldSince, HealthStatus held, String heldMessage, int flipsWhileHeld, long releaseAt) {

    /** Reason code of a device held by flap damping. */
    public static final String REASON_FLAPPING = "Flapping";

    public Flaps {
        recent = List.copyOf(recent);
        if (heldSince != 0L) {
            Objects.requireNonNull(held, "held");
        }
    }

    public boolean isHeld() {
        return heldSince != 0L;
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
        if (before != null && before.isHeld()) {
            // Held: every change extends the hold, and a worse word than the one held is held instead.
            HealthStatus held = PodStatusBuilder.worse(before.held, to);
            String message = held == before.held ? before.heldMessage : message(label, held, limits);
            return new Flaps(List.of(), before.heldSince, held, message, before.flipsWhileHeld + 1, at + limits.quietMs());
        }
        List<Long> recent = new ArrayList<>(limits.flips() + 1);
        if (before != null) {
            for (long time : before.recent) {
                if (at - time < limits.windowMs()) {
                    recent.add(time);
                }
            }
        }
        recent.add(at);
        if (recent.size() > limits.flips()) {
            HealthStatus held = PodStatusBuilder.worse(from, to);
            return new Flaps(List.of(), at, held, message(label, held, limits), 1, at + limits.quietMs());
        }
        return new Flaps(recent, 0L, null, null, 0, 0L);
    }

    /** These flaps as they are at node time {@code at}: the hold is over once the source was quiet long enough. */
    Flaps at(long at) {
        return isHeld() && at >= releaseAt ? null : this;
    }

    private static String message(String label, HealthStatus held, FlapLimits limits) {
        return "flapping: " + label + " changed health more than " + limits.flips() + " times within "
                + limits.window().toSeconds() + " s; held " + held + " until it is quiet for " + limits.quiet().toSeconds() + " s";
    }
}
