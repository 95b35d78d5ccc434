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
 * is asked again at the next rescan.
 */
public final class PluginRegistryWatcher implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(PluginRegistryWatcher.class);

    static final String SOCKET_SUFFIX = "-reg.sock";
    static final String DRA_PLUGIN_TYPE = "DRAPlugin";

    private final Path directory;
    private final Duration rescanInterval;
    private final Duration probeTimeout;
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

    public PluginRegistryWatcher(Path directory, Duration rescanInterval, Duration probeTimeout, DriverStreams streams,
                                 ScheduledExecutorService scheduler) {
        this.directory = directory;
        this.rescanInterval = rescanInterval;
        this.probeTimeout = probeTimeout;
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
        ManagedChannel channel = UnixChannels.open(socket);
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
        if (info.getName().isBlank()) {
            failed(socket, entry, "incomplete PluginInfo name='" + info.getName() + "' endpoint='" + info.getEndpoint() + "'");
            return;
        }
        entry.state = State.REGISTERED;
        streams.register(new PluginRegistration(socket, entry.modifiedAt, streams.nextOrder(), info.getName(),
                serviceEndpoint(socket, info.getEndpoint()), info.getSupportedVersionsList()));
    }

    /**
     * The socket that serves a registration's services. An empty {@code PluginInfo.endpoint} means the
     * registration socket itself: the kubelet's plugin watcher puts the path it called {@code GetInfo}
     * on in its place before any plugin handler sees the registration
     * ({@code if infoResp.Endpoint == "" { infoResp.Endpoint = socketPath }} in
     * {@code operationGenerator.GenerateRegisterPluginFunc}, kubernetes/kubernetes
     * pkg/kubelet/pluginmanager/operationexecutor/operation_generator.go), so the DRA plugin manager
     * then dials {@code unix:<registration socket>}. A driver may serve everything on one socket.
     */
    static Path serviceEndpoint(Path registrationSocket, String endpoint) {
        return endpoint.isEmpty() ? registrationSocket : Path.of(endpoint);
    }

    /**
     * A socket that does not answer is asked again after 1, 2, 4 … 32 rescans: a stuck plugin must
     * neither flood the log nor be forgotten. Logged as a warning the first time only.
     */
    private void failed(Path socket, Known entry, String error) {
        entry.state = State.FAILED;
        entry.failures++;
        entry.rescansUntilRetry = 1 << Math.min(entry.failures - 1, 5);
        if (entry.failures == 1) {
            LOGGER.warn("dra registration GetInfo failed, will retry socket={} error=\"{}\"", socket, error);
        } else {
            LOGGER.debug("dra registration GetInfo failed again socket={} failures={} error=\"{}\"", socket, entry.failures, error);
        }
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
