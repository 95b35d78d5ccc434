package io.devhealth.collector.dra;

import io.devhealth.collector.grpc.UnixChannels;
import io.devhealth.schema.proto.pluginregistration.v1.InfoRequest;
import io.devhealth.schema.proto.pluginregistration.v1.PluginInfo;
import io.devhealth.schema.proto.pluginregistration.v1.RegistrationGrpc;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds the DRA drivers of the node the way the kubelet's plugin watcher does: registration sockets
 * {@code *-reg.sock} in the plugin registry directory (default {@code /var/lib/kubelet/plugins_registry}),
 * each asked {@code Registration.GetInfo}.
 *
 * <p>Read-only towards the drivers: only {@code GetInfo} is called, never
 * {@code NotifyRegistrationStatus} (that acknowledgement belongs to the kubelet). Only
 * {@code type == "DRAPlugin"} registrations are kept. A {@link WatchService} reacts to sockets
 * appearing and disappearing; a periodic rescan catches what inotify misses on a hostPath mount
 * (and a directory that appears later). A socket replaced by a new one at the same path (new inode
 * or mtime) is a new registration. A socket that does not answer {@code GetInfo} within the timeout
 * is asked again at the next rescan. A registration is handed to {@link DriverStreams} only when
 * {@link RegistrationCheck} accepts its driver name and endpoint; a refused one is logged, counted and
 * asked again later, like one that did not answer.
 */
public final class PluginRegistryWatcher implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(PluginRegistryWatcher.class);

    static final String SOCKET_SUFFIX = "-reg.sock";
    static final String DRA_PLUGIN_TYPE = "DRAPlugin";

    private final Path directory;
    private final Duration rescanInterval;
    private final Duration probeTimeout;
    private final RegistrationCheck check;
    private final Consumer<RegistrationCheck.Refusal> onRefused;
    private final int maxInboundMessageBytes;
    private final DriverStreams streams;
    private final ScheduledExecutorService scheduler;
    private final Map<Path, Known> known = new HashMap<>();
    private final AtomicBoolean rescanQueued = new AtomicBoolean();
    private volatile boolean firstScanDone;
    private WatchService watchService;
    private Thread watchThread;
    private boolean directoryMissingLogged;
    private boolean closed;

    private enum State { PROBING, REGISTERED, IGNORED, FAILED }

    /** What the watcher knows of one socket file; {@code identity} tells a re-created socket from the old one. */
    private static final class Known {
        final Object identity;
        final Instant modifiedAt;
        State state = State.PROBING;
        ManagedChannel probeChannel;
        int failures;
        int rescansUntilRetry;

        Known(Object identity, Instant modifiedAt) {
            this.identity = identity;
            this.modifiedAt = modifiedAt;
        }
    }

    /**
     * @param check     which registrations may speak for the driver they name (endpoint in its plugin directory)
     * @param onRefused told of every registration the check refused, for the refusal counter
     * @param maxInboundMessageBytes the largest {@code GetInfo} answer read; a larger one is a failed probe
     */
    public PluginRegistryWatcher(Path directory, Duration rescanInterval, Duration probeTimeout, RegistrationCheck check,
                                 Consumer<RegistrationCheck.Refusal> onRefused, int maxInboundMessageBytes, DriverStreams streams,
                                 ScheduledExecutorService scheduler) {
        this.directory = directory;
        this.rescanInterval = rescanInterval;
        this.probeTimeout = probeTimeout;
        this.check = check;
        this.onRefused = onRefused;
        this.maxInboundMessageBytes = maxInboundMessageBytes;
        this.streams = streams;
        this.scheduler = scheduler;
    }

    public void start() {
        scheduler.execute(this::rescanSafely);
        long ms = rescanInterval.toMillis();
        scheduler.scheduleWithFixedDelay(this::rescanSafely, ms, ms, TimeUnit.MILLISECONDS);
    }

    /** Whether the directory has been scanned once (a readiness signal). */
    public boolean firstScanDone() {
        return firstScanDone;
    }

    private void rescanSafely() {
        rescanQueued.set(false);
        try {
            rescan();
        } catch (RuntimeException e) {
            LOGGER.error("plugin registry rescan failed dir={} error=\"{}\"", directory, e.toString(), e);
        }
    }

    /** One pass over the directory; public for tests that drive it without waiting. */
    public synchronized void rescan() {
        if (closed) {
            return;
        }
        if (!Files.isDirectory(directory)) {
            if (!directoryMissingLogged) {
                LOGGER.info("plugin registry directory not present (yet) dir={}", directory);
                directoryMissingLogged = true;
            }
            forgetAll();
            firstScanDone = true;
            return;
        }
        directoryMissingLogged = false;
        ensureWatching();
        Set<Path> present = new HashSet<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory, "*" + SOCKET_SUFFIX)) {
            for (Path socket : entries) {
                BasicFileAttributes attributes;
                try {
                    attributes = Files.readAttributes(socket, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                } catch (NoSuchFileException gone) {
                    continue;
                }
                if (!attributes.isOther()) {
                    continue; // not a socket
                }
                present.add(socket);
                Object identity = attributes.fileKey() != null ? attributes.fileKey() : attributes.lastModifiedTime();
                Instant modifiedAt = attributes.lastModifiedTime().toInstant();
                Known previous = known.get(socket);
                if (previous != null && Objects.equals(previous.identity, identity) && previous.modifiedAt.equals(modifiedAt)) {
                    if (previous.state == State.FAILED && --previous.rescansUntilRetry <= 0) {
                        probe(socket, previous);
                    }
                    continue;
                }
                if (previous != null) {
                    drop(socket, previous, "registration socket re-created");
                }
                Known fresh = new Known(identity, modifiedAt);
                known.put(socket, fresh);
                probe(socket, fresh);
            }
        } catch (IOException e) {
            LOGGER.warn("plugin registry not readable dir={} error=\"{}\"", directory, e.toString());
            return;
        }
        for (Path socket : Set.copyOf(known.keySet())) {
            if (!present.contains(socket)) {
                drop(socket, known.remove(socket), "registration socket removed");
            }
        }
        firstScanDone = true;
    }

    private void forgetAll() {
        for (Path socket : Set.copyOf(known.keySet())) {
            drop(socket, known.remove(socket), "plugin registry directory gone");
        }
    }

    private void drop(Path socket, Known entry, String reason) {
        if (entry.probeChannel != null) {
            entry.probeChannel.shutdownNow();
        }
        if (entry.state == State.REGISTERED) {
            LOGGER.info("dra registration gone socket={} reason=\"{}\"", socket, reason);
            streams.unregister(socket);
        }
        known.remove(socket, entry);
    }

    private void probe(Path socket, Known entry) {
        entry.state = State.PROBING;
        ManagedChannel channel = UnixChannels.open(socket, maxInboundMessageBytes);
        entry.probeChannel = channel;
        RegistrationGrpc.newStub(channel)
                .withDeadlineAfter(probeTimeout.toMillis(), TimeUnit.MILLISECONDS)
                .getInfo(InfoRequest.getDefaultInstance(), new StreamObserver<>() {
                    private PluginInfo info;

                    @Override
                    public void onNext(PluginInfo value) {
                        info = value;
                    }

                    @Override
                    public void onError(Throwable error) {
                        probed(socket, entry, null, error);
                    }

                    @Override
                    public void onCompleted() {
                        probed(socket, entry, info, null);
                    }
                });
    }

    private synchronized void probed(Path socket, Known entry, PluginInfo info, Throwable error) {
        if (entry.probeChannel != null) {
            entry.probeChannel.shutdown();
            entry.probeChannel = null;
        }
        if (closed || known.get(socket) != entry || entry.state != State.PROBING) {
            return; // replaced or removed while GetInfo was in flight
        }
        if (error != null || info == null) {
            failed(socket, entry, error == null ? "no PluginInfo" : error.toString());
            return;
        }
        if (!DRA_PLUGIN_TYPE.equals(info.getType())) {
            entry.state = State.IGNORED;
            LOGGER.debug("plugin registration ignored socket={} type={} name={}", socket, info.getType(), info.getName());
            return;
        }
        RegistrationCheck.Verdict verdict = check.check(info.getName(), info.getEndpoint());
        if (!verdict.accepted()) {
            refused(socket, entry, info, verdict);
            return;
        }
        entry.state = State.REGISTERED;
        streams.register(new PluginRegistration(socket, entry.modifiedAt, streams.nextOrder(), info.getName(),
                verdict.endpoint(), info.getSupportedVersionsList()));
    }

    /**
     * A registration the check refused is counted every time and asked again like one that did not
     * answer (its directory may be mounted, its socket created, later); the watch goes on. An empty
     * endpoint would mean the registration socket itself, which the kubelet's plugin watcher puts in
     * its place ({@code operationGenerator.GenerateRegisterPluginFunc}, kubernetes/kubernetes
     * pkg/kubelet/pluginmanager/operationexecutor/operation_generator.go): {@link RegistrationCheck} says
     * why that is refused. Name and endpoint come from the plugin: logged quoted and cut.
     */
    private void refused(Path socket, Known entry, PluginInfo info, RegistrationCheck.Verdict verdict) {
        onRefused.accept(verdict.refusal());
        if (retryLater(entry)) {
            LOGGER.warn("dra registration refused socket={} driver=\"{}\" endpoint=\"{}\" reason={} detail=\"{}\"", socket,
                    printable(info.getName()), printable(info.getEndpoint()), verdict.refusal().label(), printable(verdict.detail()));
        } else {
            LOGGER.debug("dra registration refused again socket={} reason={} failures={}", socket, verdict.refusal().label(),
                    entry.failures);
        }
    }

    /** At most 256 characters, control characters (a forged line break) as '?'. */
    static String printable(String text) {
        String cut = text.length() > 256 ? text.substring(0, 256) + "..." : text;
        StringBuilder out = new StringBuilder(cut.length());
        cut.codePoints().forEach(c -> out.appendCodePoint(Character.isISOControl(c) || c == '"' ? '?' : c));
        return out.toString();
    }

    /**
     * A socket that does not answer is asked again after 1, 2, 4 … 32 rescans: a stuck plugin must
     * neither flood the log nor be forgotten. Logged as a warning the first time only.
     */
    private void failed(Path socket, Known entry, String error) {
        if (retryLater(entry)) {
            LOGGER.warn("dra registration GetInfo failed, will retry socket={} error=\"{}\"", socket, error);
        } else {
            LOGGER.debug("dra registration GetInfo failed again socket={} failures={} error=\"{}\"", socket, entry.failures, error);
        }
    }

    /** Schedules the next probe of a failed or refused socket; true the first time, when a warning is due. */
    private static boolean retryLater(Known entry) {
        entry.state = State.FAILED;
        entry.failures++;
        entry.rescansUntilRetry = 1 << Math.min(entry.failures - 1, 5);
        return entry.failures == 1;
    }

    private void ensureWatching() {
        if (watchService != null) {
            return;
        }
        try {
            WatchService service = directory.getFileSystem().newWatchService();
            directory.register(service, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_DELETE,
                    StandardWatchEventKinds.ENTRY_MODIFY);
            watchService = service;
            watchThread = new Thread(() -> watch(service), "devhealth-plugin-registry-watch");
            watchThread.setDaemon(true);
            watchThread.start();
        } catch (IOException e) {
            LOGGER.warn("plugin registry not watchable, rescanning only dir={} intervalMs={} error=\"{}\"", directory,
                    rescanInterval.toMillis(), e.toString());
        }
    }

    private void watch(WatchService service) {
        try {
            while (true) {
                WatchKey key = service.take();
                key.pollEvents();
                boolean valid = key.reset();
                if (rescanQueued.compareAndSet(false, true)) {
                    scheduler.execute(this::rescanSafely);
                }
                if (!valid) {
                    synchronized (this) {
                        // The directory went away; the rescan registers a new watch when it is back.
                        closeWatch();
                    }
                    return;
                }
            }
        } catch (ClosedWatchServiceException | InterruptedException e) {
            // closing
        }
    }

    private void closeWatch() {
        if (watchService != null) {
            try {
                watchService.close();
            } catch (IOException e) {
                LOGGER.debug("watch service close failed error={}", e.toString());
            }
            watchService = null;
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        closeWatch();
        for (Known entry : known.values()) {
            if (entry.probeChannel != null) {
                entry.probeChannel.shutdownNow();
            }
        }
        known.clear();
    }
}
