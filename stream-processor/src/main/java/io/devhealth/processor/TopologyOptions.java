package io.devhealth.processor;

import io.devhealth.runtime.config.ServiceConfig;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Objects;

/**
 * The behaviour settings of {@link DeviceHealthTopology}, taken from {@link ProcessorConfig} in
 * production ({@link ProcessorConfig#topologyOptions}) and set through {@link #builder()} by tests.
 *
 * @param timeouts how long a report stays fresh
 * @param flapDamping when a source's changes of a device's health count as flapping, and how long the device is held
 * @param expiryInterval how often silent devices are looked for (wall clock); bounds how late an expiry is
 * @param restoreGrace after a start or a stall of the processor, how long before silence counts again
 * @param stallThreshold a gap between two expiry ticks longer than this means the processor was not running
 * @param historyRetention how long device transitions and pod status timelines are kept
 * @param terminationWindow how long a pod that left its node's allocations still receives its devices' changes
 * @param meters where the topology's counters go
 * @param enforcePrincipals whether every collector record must also carry the {@code devhealth.node} header
 *                          naming its key's node (docs/SECURITY.md); the value's node must equal the key always.
 *                          That the header was signed by that node is verified before, by the serdes
 *                          ({@link ProcessorSerdes#authenticated}, {@code principals.secret})
 * @param fleetWindow the size of the tumbling windows fleet-stats counts transitions in
 * @param fleetFlushInterval how often (wall clock) the transitions read since the last flush are folded
 *                           into the fleet counts; bounds how late fleet-stats shows a transition
 * @param cloudEvents whether every transition and every pod verdict is mirrored as CloudEvents 1.0 JSON for SIEMs
 * @param timeBounds the times a collector record may carry against the processor's clock; others are dead-lettered
 */
public record TopologyOptions(
        TimeoutPolicy timeouts,
        FlapPolicy flapDamping,
        Duration expiryInterval,
        Duration restoreGrace,
        Duration stallThreshold,
        Duration historyRetention,
        Duration terminationWindow,
        MeterRegistry meters,
        boolean enforcePrincipals,
        Duration fleetWindow,
        Duration fleetFlushInterval,
        boolean cloudEvents,
        TimeBounds timeBounds) {

    public static final Duration DEFAULT_EXPIRY_INTERVAL = Duration.ofSeconds(1);
    public static final Duration DEFAULT_RESTORE_GRACE = Duration.ofSeconds(10);
    public static final Duration DEFAULT_STALL_THRESHOLD = Duration.ofSeconds(5);
    public static final Duration DEFAULT_HISTORY_RETENTION = Duration.ofDays(30);
    public static final Duration DEFAULT_FLEET_WINDOW = Duration.ofMinutes(1);
    public static final Duration DEFAULT_FLEET_FLUSH_INTERVAL = Duration.ofMillis(250);

    public TopologyOptions {
        Objects.requireNonNull(timeouts, "timeouts");
        Objects.requireNonNull(flapDamping, "flapDamping");
        Objects.requireNonNull(meters, "meters");
        Objects.requireNonNull(fleetWindow, "fleetWindow");
        Objects.requireNonNull(fleetFlushInterval, "fleetFlushInterval");
        Objects.requireNonNull(expiryInterval, "expiryInterval");
        Objects.requireNonNull(restoreGrace, "restoreGrace");
        Objects.requireNonNull(stallThreshold, "stallThreshold");
        Objects.requireNonNull(historyRetention, "historyRetention");
        Objects.requireNonNull(terminationWindow, "terminationWindow");
        Objects.requireNonNull(timeBounds, "timeBounds");
        if (fleetWindow.isNegative() || fleetWindow.isZero()) {
            throw new IllegalArgumentException("fleet window " + fleetWindow + " must be positive");
        }
        if (fleetFlushInterval.toMillis() < 1) {
            throw new IllegalArgumentException("fleet flush interval " + fleetFlushInterval + " must be at least 1 ms");
        }
        if (stallThreshold.compareTo(expiryInterval) <= 0) {
            throw new IllegalArgumentException("stall threshold " + stallThreshold + " must exceed the expiry interval " + expiryInterval);
        }
    }

    /** The defaults of every setting, counting into a registry of its own. */
    public static TopologyOptions defaults() {
        return builder().build();
    }

    /** Settings starting from the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds {@link TopologyOptions}; each setting starts at its default. */
    public static final class Builder {
        private TimeoutPolicy timeouts = TimeoutPolicy.defaults();
        private FlapPolicy flapDamping = FlapPolicy.defaults();
        private Duration expiryInterval = DEFAULT_EXPIRY_INTERVAL;
        private Duration restoreGrace = DEFAULT_RESTORE_GRACE;
        private Duration stallThreshold = DEFAULT_STALL_THRESHOLD;
        private Duration historyRetention = DEFAULT_HISTORY_RETENTION;
        private Duration terminationWindow = ServiceConfig.DEFAULT_TERMINATION_WINDOW;
        private MeterRegistry meters;
        private boolean enforcePrincipals;
        private Duration fleetWindow = DEFAULT_FLEET_WINDOW;
        private Duration fleetFlushInterval = DEFAULT_FLEET_FLUSH_INTERVAL;
        private boolean cloudEvents;
        private TimeBounds timeBounds;

        private Builder() {}

        public Builder timeouts(TimeoutPolicy value) {
            this.timeouts = value;
            return this;
        }

        public Builder flapDamping(FlapPolicy value) {
            this.flapDamping = value;
            return this;
        }

        public Builder expiryInterval(Duration value) {
            this.expiryInterval = value;
            return this;
        }

        public Builder restoreGrace(Duration value) {
            this.restoreGrace = value;
            return this;
        }

        public Builder stallThreshold(Duration value) {
            this.stallThreshold = value;
            return this;
        }

        public Builder historyRetention(Duration value) {
            this.historyRetention = value;
            return this;
        }

        public Builder terminationWindow(Duration value) {
            this.terminationWindow = value;
            return this;
        }

        public Builder meters(MeterRegistry value) {
            this.meters = value;
            return this;
        }

        public Builder enforcePrincipals(boolean value) {
            this.enforcePrincipals = value;
            return this;
        }

        public Builder fleetWindow(Duration value) {
            this.fleetWindow = value;
            return this;
        }

        public Builder fleetFlushInterval(Duration value) {
            this.fleetFlushInterval = value;
            return this;
        }

        public Builder cloudEvents(boolean value) {
            this.cloudEvents = value;
            return this;
        }

        /** Default: {@link TimeBounds#DEFAULT_FUTURE_SKEW} ahead, the history retention back. */
        public Builder timeBounds(TimeBounds value) {
            this.timeBounds = value;
            return this;
        }

        public TopologyOptions build() {
            return new TopologyOptions(timeouts, flapDamping, expiryInterval, restoreGrace, stallThreshold, historyRetention, terminationWindow,
                    meters == null ? new SimpleMeterRegistry() : meters, enforcePrincipals, fleetWindow, fleetFlushInterval, cloudEvents,
                    timeBounds == null ? new TimeBounds(TimeBounds.DEFAULT_FUTURE_SKEW, historyRetention) : timeBounds);
        }
    }
}
