package io.devhealth.collector.nvml;

import io.devhealth.runtime.config.ServiceConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;

/**
 * Settings of the NVML health source. Declared once in {@link #define(ConfigDef)} so that the
 * collector's {@code ConfigDef} carries them (env vars via {@link ServiceConfig#envName}, e.g.
 * {@code nvml.policy.file} → {@code DEVHEALTH_NVML_POLICY_FILE}); {@link #from(AbstractConfig)}
 * reads them back.
 *
 * @param enabled whether the collector runs the NVML source at all
 * @param libraryPath {@code libnvidia-ml.so.1} or the directory holding it; null = the dynamic loader's search
 * @param policyFile JSON merged over the shipped {@link HealthPolicy}; null = the defaults
 * @param pollInterval how often readings are polled
 * @param eventWaitTimeout the timeout of one {@code nvmlEventSetWait_v2}
 * @param healthTimeout stamped on reports as timeoutSeconds; unchanged devices are re-sent at half of it
 * @param evaluateInterval how often coalesced events are turned into reports (new findings also trigger at once)
 * @param reinitInterval how soon NVML is re-initialised after it failed or a GPU was lost
 * @param rescanInterval how often GPUs and MIG instances are re-enumerated although nothing failed
 * @param stateDirectory where sticky findings are kept across restarts; null = not kept (the collector
 *     fills in {@code <spool.dir>/nvml-sticky} when only the spool directory is set)
 * @param bootIdFile the node's boot id ({@code /proc/sys/kernel/random/boot_id}); null = reboots judged by GPU evidence alone
 */
public record NvmlConfig(boolean enabled, Path libraryPath, Path policyFile, Duration pollInterval, Duration eventWaitTimeout,
        Duration healthTimeout, Duration evaluateInterval, Duration reinitInterval, Duration rescanInterval, Path stateDirectory,
        Path bootIdFile) {

    public static final String ENABLED = "nvml.enabled";
    public static final String LIBRARY_PATH = "nvml.library.path";
    public static final String POLICY_FILE = "nvml.policy.file";
    public static final String POLL_INTERVAL = "nvml.poll.interval.ms";
    public static final String EVENT_WAIT_TIMEOUT = "nvml.event.wait.timeout.ms";
    public static final String HEALTH_TIMEOUT = "nvml.health.timeout.seconds";
    public static final String EVALUATE_INTERVAL = "nvml.evaluate.interval.ms";
    public static final String REINIT_INTERVAL = "nvml.reinit.interval.ms";
    public static final String RESCAN_INTERVAL = "nvml.rescan.interval.ms";
    public static final String STATE_DIR = "nvml.state.dir";
    public static final String BOOT_ID_FILE = "nvml.boot.id.file";
    /** The subdirectory of the spool directory used when {@link #STATE_DIR} is empty. */
    public static final String DEFAULT_STATE_SUBDIRECTORY = "nvml-sticky";

    public NvmlConfig {
        Objects.requireNonNull(pollInterval);
        Objects.requireNonNull(eventWaitTimeout);
        Objects.requireNonNull(healthTimeout);
        Objects.requireNonNull(evaluateInterval);
        Objects.requireNonNull(reinitInterval);
        Objects.requireNonNull(rescanInterval);
        if (healthTimeout.toSeconds() < 2) {
            throw new IllegalArgumentException("healthTimeout must be at least 2 s");
        }
    }

    /** Adds the NVML options to {@code definition} and returns it. */
    public static ConfigDef define(ConfigDef definition) {
        return definition
                .define(ENABLED, Type.BOOLEAN, true, Importance.MEDIUM,
                        "Watch GPUs through NVML (libnvidia-ml.so.1). Without the library the source reports itself UNSUPPORTED in the heartbeat; nothing fails.")
                .define(LIBRARY_PATH, Type.STRING, "", Importance.LOW,
                        "Path of libnvidia-ml.so.1, or of the directory holding it; empty = the dynamic loader's search path (ld.so.cache).")
                .define(POLICY_FILE, Type.STRING, "", Importance.MEDIUM,
                        "JSON health policy merged over the shipped defaults (XID → UNHEALTHY | HEALTHY_WITH_MESSAGE | IGNORE, untilReset, thresholds); empty = defaults.")
                .define(POLL_INTERVAL, Type.LONG, 10_000L, ConfigDef.Range.atLeast(100), Importance.LOW,
                        "How often readings (row remapping, retired pages, ECC, temperature, NVLink, clocks, power, recovery action) are polled.")
                .define(EVENT_WAIT_TIMEOUT, Type.LONG, 5_000L, ConfigDef.Range.between(10, 60_000), Importance.LOW,
                        "Timeout of one nvmlEventSetWait_v2 call; also bounds how long stopping the event thread takes.")
                .define(HEALTH_TIMEOUT, Type.LONG, 30L, ConfigDef.Range.atLeast(2), Importance.LOW,
                        "Health timeout stamped on NVML reports; unchanged devices are re-sent (KEEPALIVE) at half of it.")
                .define(EVALUATE_INTERVAL, Type.LONG, 1_000L, ConfigDef.Range.atLeast(10), Importance.LOW,
                        "How often coalesced NVML events are evaluated; the first event of a new kind is evaluated at once.")
                .define(REINIT_INTERVAL, Type.LONG, 30_000L, ConfigDef.Range.atLeast(10), Importance.LOW,
                        "How soon NVML is initialised again after it failed, or after a GPU was lost (to see it come back after a reset).")
                .define(RESCAN_INTERVAL, Type.LONG, 300_000L, ConfigDef.Range.atLeast(1_000), Importance.LOW,
                        "How often GPUs and MIG instances are enumerated again although nothing failed.")
                .define(STATE_DIR, Type.STRING, "", Importance.MEDIUM,
                        "Directory where sticky findings (XIDs held until a GPU reset) are kept, one JSON file per GPU, so that a "
                                + "collector restart does not report a failed GPU Healthy. Empty: <spool.dir>/" + DEFAULT_STATE_SUBDIRECTORY
                                + " (on the spool's hostPath); without spool.dir either, sticky findings do not survive a restart.")
                .define(BOOT_ID_FILE, Type.STRING, "/proc/sys/kernel/random/boot_id", Importance.LOW,
                        "The node's boot id. A sticky finding written under another boot id is dropped at start (a reboot resets the "
                                + "GPUs); empty or unreadable: only GPU reset evidence clears it.");
    }

    /** The NVML settings of a config whose definition went through {@link #define(ConfigDef)}. */
    public static NvmlConfig from(AbstractConfig config) {
        return new NvmlConfig(
                config.getBoolean(ENABLED),
                optionalPath(config.getString(LIBRARY_PATH)),
                optionalPath(config.getString(POLICY_FILE)),
                Duration.ofMillis(config.getLong(POLL_INTERVAL)),
                Duration.ofMillis(config.getLong(EVENT_WAIT_TIMEOUT)),
                Duration.ofSeconds(config.getLong(HEALTH_TIMEOUT)),
                Duration.ofMillis(config.getLong(EVALUATE_INTERVAL)),
                Duration.ofMillis(config.getLong(REINIT_INTERVAL)),
                Duration.ofMillis(config.getLong(RESCAN_INTERVAL)),
                optionalPath(config.getString(STATE_DIR)),
                optionalPath(config.getString(BOOT_ID_FILE)));
    }

    /** The documented defaults. */
    public static NvmlConfig defaults() {
        return from(new AbstractConfig(define(new ConfigDef()), java.util.Map.of(), false) {});
    }

    private static Path optionalPath(String value) {
        return value == null || value.isBlank() ? null : Path.of(value.trim());
    }

    /** A builder starting from the documented defaults ({@link #defaults()}). */
    public static Builder builder() {
        return defaults().toBuilder();
    }

    /** A builder starting from these settings (tests and the demo run faster than a node). */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /** Sets what differs from where it started; {@link #build()} validates as the record does. */
    public static final class Builder {
        private boolean enabled;
        private Path libraryPath;
        private Path policyFile;
        private Duration pollInterval;
        private Duration eventWaitTimeout;
        private Duration healthTimeout;
        private Duration evaluateInterval;
        private Duration reinitInterval;
        private Duration rescanInterval;
        private Path stateDirectory;
        private Path bootIdFile;

        private Builder(NvmlConfig from) {
            enabled = from.enabled;
            libraryPath = from.libraryPath;
            policyFile = from.policyFile;
            pollInterval = from.pollInterval;
            eventWaitTimeout = from.eventWaitTimeout;
            healthTimeout = from.healthTimeout;
            evaluateInterval = from.evaluateInterval;
            reinitInterval = from.reinitInterval;
            rescanInterval = from.rescanInterval;
            stateDirectory = from.stateDirectory;
            bootIdFile = from.bootIdFile;
        }

        public Builder enabled(boolean value) {
            enabled = value;
            return this;
        }

        /** Null: the dynamic loader's search. */
        public Builder libraryPath(Path path) {
            libraryPath = path;
            return this;
        }

        /** Null: the shipped policy. */
        public Builder policyFile(Path path) {
            policyFile = path;
            return this;
        }

        public Builder pollInterval(Duration interval) {
            pollInterval = interval;
            return this;
        }

        public Builder eventWaitTimeout(Duration timeout) {
            eventWaitTimeout = timeout;
            return this;
        }

        public Builder healthTimeout(Duration timeout) {
            healthTimeout = timeout;
            return this;
        }

        public Builder evaluateInterval(Duration interval) {
            evaluateInterval = interval;
            return this;
        }

        public Builder reinitInterval(Duration interval) {
            reinitInterval = interval;
            return this;
        }

        public Builder rescanInterval(Duration interval) {
            rescanInterval = interval;
            return this;
        }

        /** Null: sticky findings are not kept. */
        public Builder stateDirectory(Path directory) {
            stateDirectory = directory;
            return this;
        }

        /** Null: reboots are judged by GPU evidence alone. */
        public Builder bootIdFile(Path file) {
            bootIdFile = file;
            return this;
        }

        public NvmlConfig build() {
            return new NvmlConfig(enabled, libraryPath, policyFile, pollInterval, eventWaitTimeout, healthTimeout,
                    evaluateInterval, reinitInterval, rescanInterval, stateDirectory, bootIdFile);
        }
    }

    /** Half the health timeout: how often an unchanged device is re-sent. */
    public Duration keepAliveInterval() {
        return healthTimeout.dividedBy(2);
    }
}
