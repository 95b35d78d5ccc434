package io.devhealth.sink.postmortem;

import io.devhealth.schema.VerdictWords;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.Verdict;

/**
 * "Infrastructure or application?" for a terminated pod, as its {@link DevicePostMortem} record says:
 * the answer a Job's {@code podFailurePolicy} or a person needs about why the pod ended. The answers are
 * the pod-verdicts contract's {@link Verdict}, spelled for people by {@link VerdictWords}:
 * <ul>
 * <li>{@link Verdict#DEVICE_FAILURE}: a device of the pod was Unhealthy when its containers finished, or
 * turned Unhealthy within the termination window after: the hardware, whatever the exit code said;</li>
 * <li>{@link Verdict#NO_DEVICE_FAILURE}: every device was Healthy, on fresh reports, when the containers
 * finished: not the hardware;</li>
 * <li>{@link Verdict#UNKNOWN}: a device's health at the end was not known (no fresh report covered it): no
 * answer either way.</li>
 * </ul>
 */
final class PodVerdict {

    private PodVerdict() {}

    /**
     * From the worst health of the pod's devices as of termination ({@link TerminatedDeviceHealth}): a
     * device the processor last heard of too long ago is already Unknown there, so Healthy means healthy
     * on fresh reports.
     */
    static Verdict of(HealthStatus worstAtTermination) {
        return switch (worstAtTermination) {
            case UNHEALTHY -> Verdict.DEVICE_FAILURE;
            case HEALTHY -> Verdict.NO_DEVICE_FAILURE;
            case UNKNOWN -> Verdict.UNKNOWN;
        };
    }

    /** The verdict a record's {@code spec.verdict} names; a word this sink does not know is {@link Verdict#UNKNOWN}. */
    static Verdict ofWord(String word) {
        return VerdictWords.parse(word).orElse(Verdict.UNKNOWN);
    }
}
