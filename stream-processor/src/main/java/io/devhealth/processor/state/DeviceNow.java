package io.devhealth.processor.state;

import io.devhealth.schema.avro.HealthStatus;
import java.time.Instant;
import java.util.List;

/**
 * One device as the processor holds it now (as of its last commit, keep-alives included): the health merged from its
 * sources, and each source's own word. What the query API shows of a node's devices.
 *
 * @param uuid the device's UUID where its node's inventory names one; null otherwise
 * @param since when {@code health} became what it is; null while it never changed
 * @param sources in the order the processor merges them
 */
public record DeviceNow(String driver, String pool, String device, String uuid, HealthStatus health, String message, String reason,
                        Instant since, List<SourceNow> sources) {

    public DeviceNow {
        sources = List.copyOf(sources);
    }

    /**
     * One source's latest word about the device (a DRA driver, NVML…).
     *
     * @param kind the kind of source ({@code DRA}, {@code NVML}…)
     * @param observedAt when the source said it
     * @param refreshedAt the latest evidence that the source still stands by it; silence counts from here
     * @param timeoutMs how long the word stays fresh after {@code refreshedAt}
     * @param hold the flap-damping hold on this source; null when there is none
     */
    public record SourceNow(String kind, String name, HealthStatus health, String message, String reason, Instant observedAt,
                            Instant refreshedAt, long timeoutMs, Hold hold) {}

    /**
     * A flapping source's hold: the device is shown {@code health} until {@code releaseAt}, or later if it keeps flapping.
     *
     * @param flips the changes of health that started the hold
     */
    public record Hold(Instant since, HealthStatus health, int flips, Instant releaseAt) {}
}
