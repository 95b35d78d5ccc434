package io.devhealth.collector.nvml.internals;


/**
 * Decides from two consecutive polls of one GPU whether it was reset in between.
 *
 * <p>Evidence used (any one suffices):
 * <ul>
 *   <li>the GPU recovery-action field went from an action back to NONE;
 *   <li>a pending row remap or page retirement is no longer pending (they complete only on reset);
 *   <li>the volatile uncorrected ECC counter went down (volatile counters restart at driver load);
 *   <li>the energy counter went down (it counts since the driver was last reloaded).
 * </ul>
 * NVML has no "reset count": after a reset by {@code nvidia-smi -r} alone, only these side effects
 * are visible. Whether the volatile ECC and energy counters restart on a GPU reset without a driver
 * reload is UNCONFIRMED; the other two are documented reset effects. A GPU that was lost and is
 * reachable again is the fourth kind of evidence, handled by the tracker.
 */
final class ResetDetector {

    private ResetDetector() {}

    /** The evidence in words, or null when {@code now} shows no reset since {@code before}. */
    static String evidence(Readings before, Readings now) {
        if (before == null || now == null) {
            return null;
        }
        if (before.recoveryAction() != null && before.recoveryAction() != 0 && now.recoveryAction() != null
                && now.recoveryAction() == 0) {
            return "recovery action returned to none";
        }
        if (before.remappedRows() != null && before.remappedRows().pending() && now.remappedRows() != null
                && !now.remappedRows().pending()) {
            return "pending row remapping completed";
        }
        if (Boolean.TRUE.equals(before.retiredPagesPending()) && Boolean.FALSE.equals(now.retiredPagesPending())) {
            return "pending page retirement completed";
        }
        if (before.volatileUncorrectedEcc() != null && now.volatileUncorrectedEcc() != null
                && now.volatileUncorrectedEcc() < before.volatileUncorrectedEcc()) {
            return "volatile ECC counters restarted";
        }
        if (before.energyMj() != null && now.energyMj() != null && now.energyMj() < before.energyMj()) {
            return "energy counter restarted";
        }
        return null;
    }
}
