package io.devhealth.processor;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Objects;

/**
 * The behaviour settings of {@link DeviceHealthTopology}, taken from {@link ProcessorConfig} in
 * production and set directly by tests.
 *
 * @param timeouts how long a report stays fresh
 * @param expiryInterval how often silent devices are looked for (wall clock); bounds how late an expiry is
 * @param restoreGrace after a start or a stall of the processor, how long before silence counts again
 * @param stallThreshold a gap between two expiry ticks longer than this means the processor was not running
 * @param historyRetention how long device transitions and pod status timelines are kept
 * @param meters where the topology's counters go
 * @param enforcePrincipals whether every collector record must also carry the {@code devhealth.node} header
 *                          naming its key's node (docs/SECURITY.md); the value's node must equal the key always.
 *                          That the header was signed by that node is verified before, by the serdes
 *                          ({@link ProcessorSerdes#authenticated}, {@code principals.secret})
 * @param fleetWindow the size of the tumbling windows fleet-stats counts transitions in
 * @param cloudEvents whether every transition is mirrored as CloudEvents 1.0 JSON for SIEMs
 */
public record TopologyOptions(
        TimeoutPolicy timeouts,
        Duration expiryInterval,
        Duration restoreGrace,
        Duration stallThreshold,
        Duration historyRetention,
        MeterRegistry meters,
        boolean enforcePrincipals,
        Duration fleetWindow,
        boolean cloudEvents) {

    public static final Duration DEFAULT_EXPIRY_INTERVAL = Duration.ofSeconds(1);
    public static final Duration DEFAULT_RESTORE_GRACE = Duration.ofSeconds(10);
    public static final Duration DEFAULT_STALL_THRESHOLD = Duration.ofSeconds(5);
    public static final Duration DEFAULT_HISTORY_RETENTION = Duration.ofDays(30);
    public static final Duration DEFAULT_FLEET_WINDOW = Duration.ofMinutes(1);

    public TopologyOptions {
        Objects.requireNonNull(timeouts, "timeouts");
        Objects.requireNonNull(meters, "meters");
        Objects.requireNonNull(fleetWindow, "fleetWindow");
        if (fleetWindow.isNegative() || fleetWindow.isZero()) {
            throw new IllegalArgumentException("fleet window " + fleetWindow + " must be positive");
        }
        if (stallThreshold.compareTo(expiryInterval) <= 0) {
            throw new IllegalArgumentException("stall threshold " + stallThreshold + " must exceed the expiry interval " + expiryInterval);
        }
    }

    public TopologyOptions(TimeoutPolicy timeouts, Duration expiryInterval, Duration restoreGrace, Duration stallThreshold,
                           Duration historyRetention, MeterRegistry meters) {
        this(timeouts, expiryInterval, restoreGrace, stallThreshold, historyRetention, meters, false, DEFAULT_FLEET_WINDOW, false);
    }

    public static TopologyOptions defaults() {
        return new TopologyOptions(TimeoutPolicy.defaults(), DEFAULT_EXPIRY_INTERVAL, DEFAULT_RESTORE_GRACE,
                DEFAULT_STALL_THRESHOLD, DEFAULT_HISTORY_RETENTION, new SimpleMeterRegistry());
    }

    public TopologyOptions withTimeouts(TimeoutPolicy policy) {
        return new TopologyOptions(policy, expiryInterval, restoreGrace, stallThreshold, historyRetention, meters,
                enforcePrincipals, fleetWindow, cloudEvents);
    }

    public TopologyOptions withMeters(MeterRegistry registry) {
        return new TopologyOptions(timeouts, expiryInterval, restoreGrace, stallThreshold, historyRetention, registry,
                enforcePrincipals, fleetWindow, cloudEvents);
    }

    public TopologyOptions withRestoreGrace(Duration grace) {
        return new TopologyOptions(timeouts, expiryInterval, grace, stallThreshold, historyRetention, meters,
                enforcePrincipals, fleetWindow, cloudEvents);
    }

    public TopologyOptions withEnforcePrincipals(boolean enforce) {
        return new TopologyOptions(timeouts, expiryInterval, restoreGrace, stallThreshold, historyRetention, meters,
                enforce, fleetWindow, cloudEvents);
    }

    public TopologyOptions withFleetWindow(Duration window) {
        return new TopologyOptions(timeouts, expiryInterval, restoreGrace, stallThreshold, historyRetention, meters,
                enforcePrincipals, window, cloudEvents);
    }

    public TopologyOptions withCloudEvents(boolean enabled) {
        return new TopologyOptions(timeouts, expiryInterval, restoreGrace, stallThreshold, historyRetention, meters,
                enforcePrincipals, fleetWindow, enabled);
    }
}
