package io.devhealth.collector.nvml.internals;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import io.devhealth.collector.nvml.jna.Nvml.RemappedRows;
import io.devhealth.schema.avro.HealthStatus;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * What survives a collector restart of one GPU: its sticky (untilReset) findings, and the reset
 * evidence the GPU showed when they were last written, so that the next collector can tell whether
 * the GPU was reset while nobody watched. The on-disk form of {@link StickyFindingStore}; plain
 * strings and numbers so that an operator can read the file during a post-mortem.
 *
 * @param version the format version ({@link #VERSION}); other versions are dropped, not guessed at
 * @param uuid the GPU UUID (also the file name)
 * @param name the GPU's name, for a GPU restored while NVML cannot enumerate it
 * @param pciBusId the GPU's PCI bus id, likewise
 * @param index the GPU's NVML index, likewise
 * @param savedAt when written
 * @param bootId the node's boot id ({@code /proc/sys/kernel/random/boot_id}) when written; null if unknown
 * @param baseline the reset-relevant readings of the GPU's last successful poll; null before any
 * @param findings the sticky findings, never empty in a stored record; a {@code GPU-LOST} one means the GPU
 *     answered GPU_IS_LOST, and the next collector finding it answering is reset evidence (a lost GPU does
 *     not come back without a reset)
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record StickyRecord(int version, String uuid, String name, String pciBusId, int index, String savedAt,
        String bootId, Baseline baseline, List<StickyFinding> findings) {

    public static final int VERSION = 1;
    /** NVML UUIDs ({@code GPU-…}, {@code MIG-…}): the only names the store turns into file names. */
    static final Pattern UUID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,95}");

    public StickyRecord {
        findings = findings == null ? List.of() : List.copyOf(findings);
    }

    /**
     * One sticky finding of the GPU ({@code gpuInstanceId}/{@code computeInstanceId} null) or of one
     * of its MIG instances.
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record StickyFinding(Integer gpuInstanceId, Integer computeInstanceId, String reason, String health, String text,
            String first, String last, long count) {

        DeviceKey device(String uuid) {
            return new DeviceKey(uuid, gpuInstanceId, computeInstanceId);
        }
    }

    /** The readings {@link ResetDetector} compares; everything else in a poll is irrelevant to a reset. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Baseline(Long recoveryAction, Boolean remappedRowsPending, Boolean retiredPagesPending, Long volatileUncorrectedEcc,
            Long energyMj) {

        static Baseline of(Readings readings) {
            return new Baseline(readings.recoveryAction(), readings.remappedRows() == null ? null : readings.remappedRows().pending(),
                    readings.retiredPagesPending(), readings.volatileUncorrectedEcc(), readings.energyMj());
        }

        /** A poll holding only the reset evidence, as the "before" side of {@link ResetDetector#evidence}. */
        Readings toReadings() {
            RemappedRows rows = remappedRowsPending == null ? null : new RemappedRows(0, 0, remappedRowsPending, false);
            return new Readings(null, null, rows, retiredPagesPending, volatileUncorrectedEcc, null, null, null, null, energyMj,
                    recoveryAction, null);
        }

        /**
         * The part worth a write when it changes. The energy counter moves on every poll and only
         * its going down means anything, so an older (lower) stored value stays valid evidence and
         * is refreshed only when something else is written.
         */
        String discreteKey() {
            return recoveryAction + "|" + remappedRowsPending + "|" + retiredPagesPending + "|" + volatileUncorrectedEcc;
        }
    }

    /** Checks what a file said; the problem in words, or null when the record can be applied. */
    String problem(String expectedUuid) {
        if (version != VERSION) {
            return "unsupported version " + version;
        }
        if (uuid == null || !uuid.equals(expectedUuid)) {
            return "uuid " + uuid + " does not match the file name";
        }
        if (findings.isEmpty()) {
            return "no findings";
        }
        for (StickyFinding finding : findings) {
            if (finding == null || finding.reason() == null || finding.reason().isBlank() || finding.text() == null) {
                return "finding without reason or text";
            }
            if ((finding.gpuInstanceId() == null) != (finding.computeInstanceId() == null)) {
                return "finding " + finding.reason() + " with only one of gpuInstanceId and computeInstanceId";
            }
            try {
                HealthStatus.valueOf(Objects.requireNonNull(finding.health(), "health"));
                Instant.parse(Objects.requireNonNull(finding.first(), "first"));
                Instant.parse(Objects.requireNonNull(finding.last(), "last"));
            } catch (RuntimeException e) {
                return "finding " + finding.reason() + " unreadable: " + e.getMessage();
            }
        }
        return null;
    }

    /** What is worth a write when it changes: GPU, boot, baseline evidence, the set of findings. */
    String writeKey() {
        StringBuilder key = new StringBuilder(uuid).append('|').append(bootId).append('|')
                .append(baseline == null ? "-" : baseline.discreteKey());
        findings.stream().map(f -> f.gpuInstanceId() + "/" + f.computeInstanceId() + "/" + f.reason() + "/" + f.health()).sorted()
                .forEach(k -> key.append('|').append(k));
        return key.toString();
    }
}
