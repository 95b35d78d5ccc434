package io.devhealth.sink;

import io.devhealth.schema.VerdictWords;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.avro.Verdict;

/**
 * "Infrastructure or application?" for a terminated pod, as its {@link DevicePostMortem} record says:
 * the answer a Job's {@code podFailurePolicy} or a person needs about why the pod ended.
 */
public enum PodVerdict {
    /**
     * A device of the pod was Unhealthy when its containers finished, or turned Unhealthy within the
     * termination window after: the hardware, whatever the exit code said.
     */
    DEVICE_FAILURE(Verdict.DEVICE_FAILURE),
    /** Every device was Healthy, on fresh reports, when the containers finished: not the hardware. */
    NO_DEVICE_FAILURE(Verdict.NO_DEVICE_FAILURE),
    /** A device's health at the end was not known (no fresh report covered it): no answer either way. */
    UNKNOWN(Verdict.UNKNOWN);

    private final Verdict avro;

    PodVerdict(Verdict avro) {
        this.avro = avro;
    }

    /** The word in the record ({@code spec.verdict}) and in {@code kubectl get dpm} ({@link VerdictWords}). */
    public String word() {
        return VerdictWords.of(avro);
    }

    /** The verdict a record's {@code spec.verdict} names; a word this sink does not know is {@link #UNKNOWN}. */
    static PodVerdict ofWord(String word) {
        Verdict verdict = VerdictWords.parse(word).orElse(Verdict.UNKNOWN);
        for (PodVerdict known : values()) {
            if (known.avro == verdict) {
                return known;
            }
        }
        return UNKNOWN;
    }

    /** The symbol in pod-verdicts ({@link Verdict}): the same three answers. */
    Verdict avro() {
        return avro;
    }

    /**
     * From the worst health of the pod's devices as of termination: a device the processor last heard
     * of too long ago is already Unknown there, so Healthy means healthy on fresh reports.
     */
    static PodVerdict of(HealthStatus worstAtTermination) {
        return switch (worstAtTermination) {
            case UNHEALTHY -> DEVICE_FAILURE;
            case HEALTHY -> NO_DEVICE_FAILURE;
            case UNKNOWN -> UNKNOWN;
        };
    }
}
