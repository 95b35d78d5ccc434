package io.devhealth.collector.nvml;

import io.devhealth.collector.nvml.internals.BootId;
import io.devhealth.collector.nvml.internals.EventCoalescer;
import io.devhealth.collector.nvml.internals.EventLoopListener;
import io.devhealth.collector.nvml.internals.GpuDevice;
import io.devhealth.collector.nvml.internals.HealthTracker;
import io.devhealth.collector.nvml.internals.NvmlSession;
import io.devhealth.collector.nvml.internals.ReadingsProbe;
import io.devhealth.collector.nvml.internals.ReportEmitter;
import io.devhealth.collector.nvml.internals.StickyFindingStore;
import io.devhealth.collector.nvml.jna.Nvml;
import io.devhealth.collector.nvml.jna.NvmlException;
import io.devhealth.collector.nvml.jna.NvmlUnavailableException;
import io.devhealth.schema.avro.DeviceHealthReport;
import io.devhealth.schema.avro.SourceKind;
import io.devhealth.schema.avro.SourceState;
import io.devhealth.schema.avro.SourceStatus;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * GPU health from NVML, as {@code DeviceHealthReport}s (source NVML, sourceName {@code nvml}, the GPU
 * UUID plus MIG GI/CI ids as identity; driver/pool/device empty for the processor to map).
 *
 * <p>A dedicated daemon thread waits for NVML events and only counts them (storms coalesce per
 * device and reason); one scheduler thread initialises NVML, enumerates, polls readings at the poll
 * interval, applies the {@link HealthPolicy}, and publishes on change and every half timeout (keep-
 * alives stop if that thread wedges inside NVML, so the processor's timeout turns the devices
 * Unknown). A missing library, a driver that does not load, NOT_SUPPORTED and GPU_IS_LOST are states
 * with a message, never a crash: NVML is initialised again every reinit interval while it is down or
 * a GPU is lost, which is also how a lost GPU is seen to come back after a reset.
 *
 * <p>With a state directory, sticky findings survive a restart ({@link StickyFindingStore}): they are
 * written before the report that carries them is published, deleted before the recovery is, and
 * reloaded before the first report of the next run (see the package documentation).
 */
public final class NvmlHealthSource implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(NvmlHealthSource.class);

    private final NvmlConfig config;
    private final HealthPolicy policy;
    private final NvmlListener listener;
    private final Clock clock;
    private final HealthTracker tracker;
    private final ReportEmitter emitter;
    private final EventCoalescer coalescer = new EventCoalescer();
    private final ReadingsProbe probe = new ReadingsProbe();
    private final StickyFindingStore stickyStore;
    private final ScheduledExecutorService scheduler;
    private final AtomicBoolean wakeupPending = new AtomicBoolean();
    private final AtomicBoolean closing = new AtomicBoolean();
    private volatile boolean pollRequested;
    private volatile SourceState state;
    private volatile List<GpuInfo> devices = List.of();

    // Owned by the scheduler thread.
    private Nvml nvml;
    private NvmlSession session;
    private Instant nextInit = Instant.MIN;
    private Instant nextPoll = Instant.MIN;
    private Instant nextRescan;
    private boolean closed;
    private boolean restored;

    /** A source with {@code policy}; use {@link #create} to load the policy from the config. */
    public NvmlHealthSource(NvmlConfig config, HealthPolicy policy, String cluster, String node, NvmlListener listener, Clock clock) {
        this.config = Objects.requireNonNull(config);
        this.policy = Objects.requireNonNull(policy);
        this.listener = Objects.requireNonNull(listener);
        this.clock = Objects.requireNonNull(clock);
        this.tracker = new HealthTracker(policy);
        this.emitter = new ReportEmitter(cluster, node, config.healthTimeout());
        this.stickyStore = config.stateDirectory() == null ? null : new StickyFindingStore(config.stateDirectory());
        this.state = state(SourceStatus.DOWN, "not started");
        this.scheduler = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "devhealth-nvml");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** A source with the policy of {@code config} (defaults merged with its policy file); a bad policy file throws here. */
    public static NvmlHealthSource create(NvmlConfig config, String cluster, String node, NvmlListener listener, Clock clock) {
        return new NvmlHealthSource(config, HealthPolicy.load(config.policyFile()), cluster, node, listener, clock);
    }

    public void start() {
        long period = config.evaluateInterval().toMillis();
        scheduler.scheduleWithFixedDelay(this::tick, 0, period, TimeUnit.MILLISECONDS);
        LOGGER.info("nvml source started library={} policy={} poll={} timeout={} stateDir={}", config.libraryPath() == null ? Nvml.SONAME
                : config.libraryPath(), config.policyFile() == null ? "defaults" : config.policyFile(), config.pollInterval(),
                config.healthTimeout(), stickyStore == null ? "none (sticky findings not kept across restarts)" : stickyStore.directory());
    }

    /** UP while NVML is initialised, DOWN while it fails, UNSUPPORTED when the library is missing. */
    public SourceState sourceState() {
        return state;
    }

    /** The GPUs of the last enumeration. */
    public List<GpuInfo> devices() {
        return devices;
    }

    public HealthPolicy policy() {
        return policy;
    }

    private void tick() {
        if (closed) {
            return;
        }
        try {
            Instant now = clock.instant();
            restoreOnce();
            manageSession(now);
            tracker.applyEvents(coalescer.drain());
            if (session != null && (pollRequested || !now.isBefore(nextPoll))) {
                pollRequested = false;
                nextPoll = now.plus(config.pollInterval());
                poll(now);
            }
            checkEventLoop(now);
            tracker.expire(now);
            if (stickyStore != null) {
                // Before publishing: a report saying Unhealthy must not exist without the disk saying so too.
                stickyStore.sync(tracker.stickyRecords(now));
            }
            for (DeviceHealthReport report : emitter.emit(tracker.views(), now)) {
                listener.onReport(report);
            }
        } catch (RuntimeException e) {
            // The scheduler must survive anything: a dead tick thread would silence every GPU.
            LOGGER.error("nvml tick failed error=\"{}\"", e.toString(), e);
        }
    }

    /** Hands the tracker what the previous run kept; on the scheduler thread, before the first enumeration. */
    private void restoreOnce() {
        if (restored) {
            return;
        }
        restored = true;
        if (stickyStore != null) {
            tracker.restore(stickyStore.load(), BootId.read(config.bootIdFile()));
        }
    }

    private void manageSession(Instant now) {
        boolean lost = tracker.anyLost();
        if (session != null && (!now.isBefore(nextRescan) || lost && !now.isBefore(nextInit))) {
            LOGGER.info("nvml reinitialising reason={}", lost ? "gpu lost" : "rescan");
            closeSession();
        }
        if (session != null || now.isBefore(nextInit)) {
            return;
        }
        nextInit = now.plus(config.reinitInterval());
        try {
            if (nvml == null) {
                nvml = Nvml.load(config.libraryPath());
            }
            session = NvmlSession.open(nvml, policy.wantedEventMask(), coalescer, eventListener(), clock, config.eventWaitTimeout());
        } catch (NvmlUnavailableException e) {
            sourceState(SourceStatus.UNSUPPORTED, e.getMessage());
            tracker.nvmlUnavailable(e.getMessage(), now);
            return;
        } catch (NvmlException e) {
            sourceState(SourceStatus.DOWN, e.getMessage());
            tracker.nvmlUnavailable(e.getMessage(), now);
            return;
        }
        nextRescan = now.plus(config.rescanInterval());
        probe.forget();
        tracker.nvmlUnavailable(null, now);
        tracker.enumerated(session.devices(), session.unmonitored(), session.unidentified(), now);
        devices = session.devices().stream().map(NvmlHealthSource::info).collect(Collectors.toList());
        pollRequested = true;
        sourceState(SourceStatus.UP, "NVML " + driverVersion() + ", " + devices.size() + " GPU(s)"
                + (session.unmonitored().isEmpty() ? "" : ", events not watched on " + session.unmonitored().size()));
        LOGGER.info("nvml session open gpus={} unmonitored={}", devices.stream().map(GpuInfo::uuid).collect(Collectors.toList()),
                session.unmonitored().keySet());
    }

    private String driverVersion() {
        try {
            return "driver " + session.nvml().driverVersion();
        } catch (NvmlException e) {
            return "driver version unknown";
        }
    }

    private void poll(Instant now) {
        for (GpuDevice gpu : session.devices()) {
            try {
                tracker.polled(gpu.uuid(), probe.read(session.nvml(), gpu), now);
            } catch (NvmlException e) {
                if (e.isGpuLost()) {
                    tracker.lost(gpu.uuid(), null, now);
                } else {
                    LOGGER.warn("nvml poll failed gpu={} error=\"{}\"", gpu.uuid(), e.getMessage());
                }
            }
        }
    }

    private void checkEventLoop(Instant now) {
        Duration silence = session == null ? null : session.eventLoopSilence();
        Duration allowed = config.eventWaitTimeout().multipliedBy(3).plus(config.evaluateInterval().multipliedBy(2));
        if (silence != null && silence.compareTo(allowed) > 0) {
            tracker.eventWaitStuck("for " + silence.toSeconds() + " s", now);
        } else {
            tracker.eventWaitStuck(null, now);
        }
    }

    private EventLoopListener eventListener() {
        return new EventLoopListener() {
            @Override
            public void onNewEventKey() {
                wakeup();
            }

            @Override
            public void onGpuLost() {
                pollRequested = true;
                wakeup();
            }
        };
    }

    /** Evaluates soon, at most one extra tick queued however many events arrive. */
    private void wakeup() {
        if (wakeupPending.compareAndSet(false, true)) {
            try {
                scheduler.execute(() -> {
                    wakeupPending.set(false);
                    tick();
                });
            } catch (RejectedExecutionException e) {
                // Closing.
            }
        }
    }

    private void sourceState(SourceStatus status, String message) {
        SourceState previous = state;
        if (previous.getState() == status && Objects.equals(previous.getMessage(), message)) {
            return;
        }
        state = state(status, message);
        if (status != SourceStatus.UP) {
            LOGGER.warn("nvml source state={} message=\"{}\"", status, message);
        }
        try {
            listener.onSourceState(state);
        } catch (RuntimeException e) {
            LOGGER.error("nvml source state listener failed error=\"{}\"", e.toString(), e);
        }
    }

    private SourceState state(SourceStatus status, String message) {
        return SourceState.newBuilder().setSource(SourceKind.NVML).setSourceName(ReportEmitter.SOURCE_NAME).setState(status)
                .setSince(clock.instant()).setMessage(message).build();
    }

    private static GpuInfo info(GpuDevice device) {
        return new GpuInfo(device.index(), device.uuid(), device.name(), device.pciBusId(), device.migEnabled(),
                device.migDevices().stream().map(m -> new GpuInfo.MigInstance(m.migUuid(), m.gpuInstanceId(), m.computeInstanceId()))
                        .collect(Collectors.toList()));
    }

    private void closeSession() {
        if (session != null) {
            session.close();
            session = null;
        }
    }

    /** Stops the threads and shuts NVML down; waits at most the event wait timeout plus a little. */
    @Override
    public void close() {
        if (!closing.compareAndSet(false, true)) {
            return;
        }
        scheduler.execute(() -> {
            closed = true;
            closeSession();
        });
        scheduler.shutdown();
        try {
            if (!scheduler.awaitTermination(config.eventWaitTimeout().toMillis() + 2_000, TimeUnit.MILLISECONDS)) {
                LOGGER.warn("nvml source did not stop in time");
                scheduler.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            scheduler.shutdownNow();
        }
        sourceState(SourceStatus.DOWN, "stopped");
    }
}
