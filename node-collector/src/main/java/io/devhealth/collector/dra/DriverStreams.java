package io.devhealth.collector.dra;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One authoritative health stream per DRA driver, whatever the number of its registrations.
 *
 * <p>During a rolling update a driver is registered twice (two registration sockets, two service
 * endpoints). The kubelet of 1.34–1.36 streams from both into one cache, so the old endpoint's
 * stream overwrites the new one's data, and clears it when it ends (upstream #140818). Here the
 * newest registration wins: its endpoint gets the only stream; the older one's stream is closed,
 * and anything still in flight from it is discarded (every callback is checked against the
 * driver's current stream under this object's lock). When the newest registration goes away, the
 * next newest takes over; when none is left, the driver's source is reported down (its devices are
 * then neither healthy nor unhealthy to us: "source gone").
 *
 * <p>Which API: {@code v1.DRAResourceHealth} where advertised, else {@code v1alpha1}, else no
 * stream at all (source UNSUPPORTED). A stream answered {@code UNIMPLEMENTED} stays stopped until
 * the driver registers again. Thread-safe.
 */
public final class DriverStreams implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(DriverStreams.class);

    private final DriverStreamListener listener;
    private final ScheduledExecutorService scheduler;
    private final Duration maxBackoff;
    private final DraHealthStream.StreamLimits limits;
    private final Map<String, DriverState> drivers = new LinkedHashMap<>();
    private long order;
    private boolean closed;

    private static final class DriverState {
        final Map<Path, PluginRegistration> registrations = new HashMap<>();
        PluginRegistration current;
        DraHealthStream stream;
    }

    public DriverStreams(DriverStreamListener listener, ScheduledExecutorService scheduler, Duration maxBackoff,
                         DraHealthStream.StreamLimits limits) {
        this.listener = listener;
        this.scheduler = scheduler;
        this.maxBackoff = maxBackoff;
        this.limits = limits;
    }

    /** The next tie-breaker for {@link PluginRegistration#order()}. */
    public synchronized long nextOrder() {
        return ++order;
    }

    /** Adds (or replaces, same registration socket) a registration and re-elects the driver's stream. */
    public synchronized void register(PluginRegistration registration) {
        if (closed) {
            return;
        }
        DriverState state = drivers.computeIfAbsent(registration.driver(), d -> new DriverState());
        state.registrations.put(registration.registrationSocket(), registration);
        LOGGER.info("dra driver registered driver={} registration={} endpoint={} versions={} registrations={}",
                registration.driver(), registration.registrationSocket(), registration.endpoint(),
                registration.supportedVersions(), state.registrations.size());
        elect(registration.driver(), state);
    }

    /** The registration socket is gone; if it carried the driver's stream, the next newest takes over. */
    public synchronized void unregister(Path registrationSocket) {
        for (Map.Entry<String, DriverState> entry : drivers.entrySet()) {
            PluginRegistration removed = entry.getValue().registrations.remove(registrationSocket);
            if (removed != null) {
                LOGGER.info("dra driver unregistered driver={} registration={} remaining={}", entry.getKey(),
                        registrationSocket, entry.getValue().registrations.size());
                elect(entry.getKey(), entry.getValue());
            }
        }
    }

    /** The registration whose endpoint carries the driver's stream, if any. */
    public synchronized Optional<PluginRegistration> current(String driver) {
        return Optional.ofNullable(drivers.get(driver)).map(s -> s.current);
    }

    public synchronized List<String> driverNames() {
        return List.copyOf(drivers.keySet());
    }

    private void elect(String driver, DriverState state) {
        PluginRegistration newest = null;
        for (PluginRegistration candidate : state.registrations.values()) {
            if (newest == null || candidate.newerThan(newest)) {
                newest = candidate;
            }
        }
        if (newest != null && newest.equals(state.current)) {
            return;
        }
        if (state.stream != null) {
            LOGGER.info("dra stream superseded driver={} endpoint={}", driver, state.stream.socket());
            state.stream.close();
            state.stream = null;
        }
        state.current = newest;
        if (newest == null) {
            listener.onStreamDown(driver, "no registration left (registration socket removed)");
            return;
        }
        Optional<HealthApiVersion> version = HealthApiVersion.pick(newest.supportedVersions());
        if (version.isEmpty()) {
            LOGGER.info("dra driver does not advertise health driver={} versions={}", driver, newest.supportedVersions());
            listener.onUnsupported(driver, "driver does not advertise DRAResourceHealth (" + newest.supportedVersions() + ")");
            return;
        }
        DraHealthStream[] holder = new DraHealthStream[1];
        holder[0] = new DraHealthStream(driver, newest.endpoint(), version.get(), new CurrentOnly(state, holder), scheduler,
                maxBackoff, limits);
        state.stream = holder[0];
        listener.onStreamDown(driver, "connecting to " + newest.endpoint());
        holder[0].start();
    }

    /** Forwards a stream's callbacks only while it is its driver's current stream. */
    private final class CurrentOnly implements DriverStreamListener {
        private final DriverState state;
        private final DraHealthStream[] self;

        CurrentOnly(DriverState state, DraHealthStream[] self) {
            this.state = state;
            this.self = self;
        }

        private boolean current() {
            return !closed && state.stream == self[0];
        }

        @Override
        public void onStreamUp(String driver, HealthApiVersion version) {
            synchronized (DriverStreams.this) {
                if (current()) {
                    listener.onStreamUp(driver, version);
                }
            }
        }

        @Override
        public void onSnapshot(String driver, List<ObservedDevice> devices) {
            synchronized (DriverStreams.this) {
                if (current()) {
                    listener.onSnapshot(driver, devices);
                } else {
                    LOGGER.debug("dra snapshot from superseded stream dropped driver={} devices={}", driver, devices.size());
                }
            }
        }

        @Override
        public void onSnapshotRefused(String driver, DraHealthStream.Refusal refusal, String detail) {
            synchronized (DriverStreams.this) {
                if (current()) {
                    listener.onSnapshotRefused(driver, refusal, detail);
                }
            }
        }

        @Override
        public void onStreamDown(String driver, String reason) {
            synchronized (DriverStreams.this) {
                if (current()) {
                    listener.onStreamDown(driver, reason);
                }
            }
        }

        @Override
        public void onUnsupported(String driver, String reason) {
            synchronized (DriverStreams.this) {
                if (current()) {
                    listener.onUnsupported(driver, reason);
                }
            }
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        for (DriverState state : drivers.values()) {
            if (state.stream != null) {
                state.stream.close();
            }
        }
    }
}
