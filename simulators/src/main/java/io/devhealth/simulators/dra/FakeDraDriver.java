package io.devhealth.simulators.dra;

import io.devhealth.schema.proto.drahealth.v1.DRAResourceHealthGrpc;
import io.devhealth.schema.proto.pluginregistration.v1.InfoRequest;
import io.devhealth.schema.proto.pluginregistration.v1.PluginInfo;
import io.devhealth.schema.proto.pluginregistration.v1.RegistrationGrpc;
import io.devhealth.schema.proto.pluginregistration.v1.RegistrationStatus;
import io.devhealth.schema.proto.pluginregistration.v1.RegistrationStatusResponse;
import io.devhealth.simulators.internal.UnixSocketGrpcServer;
import io.grpc.BindableService;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A DRA kubelet plugin as the kubelet (or devhealth's node collector) sees it.
 *
 * <ul>
 *   <li>The <b>service endpoint</b>: a unix socket serving {@code DRAResourceHealth}
 *       ({@code NodeWatchResources}, server streaming) in the configured API versions,
 *       {@value #V1ALPHA1} and/or {@value #V1}. An API version that is not configured is not served,
 *       so calling it fails with {@code UNIMPLEMENTED}, like a driver without the health service.
 *   <li>Optionally the <b>registration socket</b> {@code <registrationDir>/<driver>-reg.sock}, serving the
 *       plugin-watcher {@code Registration} service: {@code GetInfo} returns
 *       {@code PluginInfo{type="DRAPlugin", name=<driver>, endpoint=<service socket>, supported_versions}}.
 * </ul>
 *
 * <p>Scripting: {@link #report(List)} sends one {@code NodeWatchResourcesResponse} carrying the full
 * list to every open stream, and remembers it; every stream that opens later first receives that
 * current snapshot (nothing is sent on a new stream before the first report). {@link #breakStreams()}
 * ends all open streams with {@code UNAVAILABLE}, as a crashing driver would look to the client.
 * {@code last_updated_time} is taken from the injected {@link Clock} at send time.
 *
 * <p><b>Socket paths</b> must fit {@code sun_path}: at most
 * {@value io.devhealth.simulators.internal.UnixSocketGrpcServer#MAX_SOCKET_PATH_BYTES} bytes as an
 * absolute path. A JUnit {@code @TempDir} is short enough; deep Maven module paths may not be.
 *
 * <pre>{@code
 * try (FakeDraDriver driver = FakeDraDriver.builder()
 *         .driverName("gpu.example.com")
 *         .serviceSocket(tmp.resolve("gpu/dra.sock"))
 *         .registrationDir(tmp.resolve("registry"))
 *         .healthVersions(Set.of(FakeDraDriver.V1ALPHA1, FakeDraDriver.V1))
 *         .start()) {
 *     driver.report(DeviceState.healthy("node-a", "gpu-0"), DeviceState.unhealthy("node-a", "gpu-1", "XID 79"));
 *     driver.awaitStreams(1, Duration.ofSeconds(10));
 * }
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class FakeDraDriver implements AutoCloseable {

    /** The released health API version (Kubernetes 1.34–1.37): service {@code v1alpha1.DRAResourceHealth}. */
    public static final String V1ALPHA1 = "v1alpha1";

    /** The health API version on Kubernetes master (1.38?): service {@code v1.DRAResourceHealth}. */
    public static final String V1 = "v1";

    /** {@code PluginInfo.type} of a DRA plugin. */
    public static final String PLUGIN_TYPE = "DRAPlugin";

    /** Registration string of the DRA plugin service itself, always advertised by default. */
    public static final String DRA_PLUGIN_SERVICE = "v1.DRAPlugin";

    private static final Logger LOGGER = LoggerFactory.getLogger(FakeDraDriver.class);
    private static final Set<String> KNOWN_VERSIONS = Set.of(V1ALPHA1, V1);

    private final String driverName;
    private final Set<String> healthVersions;
    private final List<String> supportedVersions;
    private final Clock clock;
    private final UnixSocketGrpcServer serviceServer;
    private final UnixSocketGrpcServer registrationServer;

    private final Object lock = new Object();
    private final List<HealthStream<?>> streams = new ArrayList<>();
    private final List<RegistrationStatus> registrationStatuses = new CopyOnWriteArrayList<>();
    private List<DeviceState> snapshot;
    private long streamsAccepted;
    private long reportsSent;
    private boolean closed;

    private FakeDraDriver(Builder builder) {
        this.driverName = builder.driverName;
        this.healthVersions = Set.copyOf(builder.healthVersions);
        this.clock = builder.clock;
        this.supportedVersions = builder.supportedVersions != null
                ? List.copyOf(builder.supportedVersions)
                : defaultSupportedVersions(healthVersions);
        List<BindableService> services = new ArrayList<>();
        if (healthVersions.contains(V1ALPHA1)) {
            services.add(new V1Alpha1HealthService());
        }
        if (healthVersions.contains(V1)) {
            services.add(new V1HealthService());
        }
        String threadName = "fake-dra-" + driverName;
        this.serviceServer = UnixSocketGrpcServer.start(builder.serviceSocket, threadName, services);
        UnixSocketGrpcServer registration = null;
        if (builder.registrationDir != null) {
            try {
                registration = UnixSocketGrpcServer.start(registrationSocketPath(builder.registrationDir, driverName),
                        threadName + "-reg", List.of(new RegistrationService()));
            } catch (RuntimeException e) {
                serviceServer.close();
                throw e;
            }
        }
        this.registrationServer = registration;
        LOGGER.info("fake dra driver started driver={} serviceSocket={} registrationSocket={} healthVersions={} "
                        + "supportedVersions={}", driverName, serviceServer.socket(),
                registrationServer == null ? "none" : registrationServer.socket(), healthVersions, supportedVersions);
    }

    /** @return a new builder */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The registration socket path the kubelet's plugin watcher expects for a driver.
     *
     * @param registrationDir the plugin registry directory (on a node: {@code /var/lib/kubelet/plugins_registry})
     * @param driverName the driver name
     * @return {@code <registrationDir>/<driverName>-reg.sock}
     */
    public static Path registrationSocketPath(Path registrationDir, String driverName) {
        return registrationDir.resolve(driverName + "-reg.sock");
    }

    private static List<String> defaultSupportedVersions(Set<String> healthVersions) {
        List<String> versions = new ArrayList<>();
        versions.add(DRA_PLUGIN_SERVICE);
        if (healthVersions.contains(V1ALPHA1)) {
            versions.add(V1ALPHA1 + ".DRAResourceHealth");
        }
        if (healthVersions.contains(V1)) {
            versions.add(V1 + ".DRAResourceHealth");
        }
        return List.copyOf(versions);
    }

    /** @return the driver name ({@code PluginInfo.name}) */
    public String driverName() {
        return driverName;
    }

    /** @return the absolute path of the service socket ({@code PluginInfo.endpoint}) */
    public Path serviceSocket() {
        return serviceServer.socket();
    }

    /** @return the absolute path of the registration socket, if registration is enabled */
    public Optional<Path> registrationSocket() {
        return Optional.ofNullable(registrationServer).map(UnixSocketGrpcServer::socket);
    }

    /** @return the served health API versions ({@value #V1ALPHA1}, {@value #V1}); may be empty */
    public Set<String> healthVersions() {
        return healthVersions;
    }

    /** @return what {@code GetInfo} advertises in {@code supported_versions} */
    public List<String> supportedVersions() {
        return supportedVersions;
    }

    /** @return the {@code PluginInfo} that {@code GetInfo} returns */
    public PluginInfo pluginInfo() {
        return PluginInfo.newBuilder()
                .setType(PLUGIN_TYPE)
                .setName(driverName)
                .setEndpoint(serviceServer.socket().toString())
                .addAllSupportedVersions(supportedVersions)
                .build();
    }

    /**
     * Sends {@code devices} as one full snapshot to every open stream and makes it the snapshot that
     * new streams receive first.
     *
     * @param devices the complete device list of this driver; may be empty
     */
    public void report(DeviceState... devices) {
        report(Arrays.asList(devices));
    }

    /**
     * Sends {@code devices} as one full snapshot to every open stream and makes it the snapshot that
     * new streams receive first.
     *
     * @param devices the complete device list of this driver; may be empty
     */
    public void report(List<DeviceState> devices) {
        List<DeviceState> copy = List.copyOf(devices);
        int sent = 0;
        synchronized (lock) {
            ensureOpen();
            snapshot = copy;
            for (HealthStream<?> stream : streams) {
                if (stream.send(copy)) {
                    sent++;
                }
            }
            reportsSent += sent;
        }
        LOGGER.info("dra report driver={} devices={} streams={}", driverName, copy.size(), sent);
    }

    /** @return the snapshot new streams receive, or {@code null} before the first report */
    public List<DeviceState> currentSnapshot() {
        synchronized (lock) {
            return snapshot;
        }
    }

    /** @return the number of {@code NodeWatchResources} streams currently open, over all versions */
    public int openStreams() {
        synchronized (lock) {
            return streams.size();
        }
    }

    /**
     * @param version {@value #V1ALPHA1} or {@value #V1}
     * @return the number of streams currently open on that API version
     */
    public int openStreams(String version) {
        synchronized (lock) {
            return (int) streams.stream().filter(s -> s.version.equals(version)).count();
        }
    }

    /** @return how many streams were ever accepted (opened), including those already closed */
    public long streamsAccepted() {
        synchronized (lock) {
            return streamsAccepted;
        }
    }

    /** @return how many responses {@link #report} has sent, summed over streams (initial snapshots excluded) */
    public long reportsSent() {
        synchronized (lock) {
            return reportsSent;
        }
    }

    /**
     * Waits until at least {@code count} streams are open.
     *
     * @param count the number of open streams to wait for
     * @param timeout how long to wait
     * @throws IllegalStateException on timeout, with the number of open streams
     */
    public void awaitStreams(int count, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (lock) {
            while (streams.size() < count) {
                long remainingMs = (deadline - System.nanoTime()) / 1_000_000;
                if (remainingMs <= 0) {
                    throw new IllegalStateException("driver " + driverName + ": expected at least " + count
                            + " open health streams within " + timeout + ", have " + streams.size());
                }
                try {
                    lock.wait(remainingMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting for health streams", e);
                }
            }
        }
    }

    /** Ends every open stream with {@code UNAVAILABLE}, as a driver restart looks to the client. */
    public void breakStreams() {
        breakStreams(Status.UNAVAILABLE.withDescription("fake driver " + driverName + " broke the stream"));
    }

    /**
     * Ends every open stream with the given status.
     *
     * @param status a non-OK status
     */
    public void breakStreams(Status status) {
        List<HealthStream<?>> ended = drainStreams();
        ended.forEach(s -> s.fail(status));
        LOGGER.info("dra streams broken driver={} streams={} code={}", driverName, ended.size(), status.getCode());
    }

    /** Ends every open stream normally (the client sees end of stream, {@code io.EOF} in Go). */
    public void completeStreams() {
        List<HealthStream<?>> ended = drainStreams();
        ended.forEach(HealthStream::complete);
        LOGGER.info("dra streams completed driver={} streams={}", driverName, ended.size());
    }

    /** @return every {@code NotifyRegistrationStatus} received, in order */
    public List<RegistrationStatus> registrationStatuses() {
        return List.copyOf(registrationStatuses);
    }

    /** Stops both servers (open streams are cancelled) and deletes the sockets. Idempotent. */
    @Override
    public void close() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            streams.clear();
            lock.notifyAll();
        }
        if (registrationServer != null) {
            registrationServer.close();
        }
        serviceServer.close();
        LOGGER.info("fake dra driver stopped driver={}", driverName);
    }

    private List<HealthStream<?>> drainStreams() {
        synchronized (lock) {
            List<HealthStream<?>> ended = new ArrayList<>(streams);
            streams.clear();
            lock.notifyAll();
            return ended;
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("fake driver " + driverName + " is closed");
        }
    }

    private <R> void openStream(String version, StreamObserver<R> observer, Function<List<DeviceState>, R> encoder) {
        ServerCallStreamObserver<R> call = (ServerCallStreamObserver<R>) observer;
        HealthStream<R> stream = new HealthStream<>(version, call, encoder);
        call.setOnCancelHandler(() -> {
            boolean removed;
            synchronized (lock) {
                removed = streams.remove(stream);
                lock.notifyAll();
            }
            if (removed) {
                LOGGER.info("dra stream cancelled by client driver={} version={}", driverName, version);
            }
        });
        int open;
        synchronized (lock) {
            if (closed) {
                stream.fail(Status.UNAVAILABLE.withDescription("fake driver is closed"));
                return;
            }
            streams.add(stream);
            streamsAccepted++;
            if (snapshot != null) {
                stream.send(snapshot);
            }
            open = streams.size();
            lock.notifyAll();
        }
        LOGGER.info("dra stream opened driver={} version={} openStreams={}", driverName, version, open);
    }

    private long nowSeconds() {
        return clock.instant().getEpochSecond();
    }

    private io.devhealth.schema.proto.drahealth.v1alpha1.NodeWatchResourcesResponse toV1Alpha1(List<DeviceState> devices) {
        long now = nowSeconds();
        var response = io.devhealth.schema.proto.drahealth.v1alpha1.NodeWatchResourcesResponse.newBuilder();
        for (DeviceState d : devices) {
            response.addDevices(io.devhealth.schema.proto.drahealth.v1alpha1.DeviceHealth.newBuilder()
                    .setDevice(io.devhealth.schema.proto.drahealth.v1alpha1.DeviceIdentifier.newBuilder()
                            .setPoolName(d.pool())
                            .setDeviceName(d.device()))
                    .setHealth(io.devhealth.schema.proto.drahealth.v1alpha1.HealthStatus.forNumber(d.health().ordinal()))
                    .setLastUpdatedTime(now)
                    .setHealthCheckTimeoutSeconds(d.timeoutSeconds())
                    .setMessage(d.message()));
        }
        return response.build();
    }

    private io.devhealth.schema.proto.drahealth.v1.NodeWatchResourcesResponse toV1(List<DeviceState> devices) {
        long now = nowSeconds();
        var response = io.devhealth.schema.proto.drahealth.v1.NodeWatchResourcesResponse.newBuilder();
        for (DeviceState d : devices) {
            response.addDevices(io.devhealth.schema.proto.drahealth.v1.DeviceHealth.newBuilder()
                    .setDevice(io.devhealth.schema.proto.drahealth.v1.DeviceIdentifier.newBuilder()
                            .setPoolName(d.pool())
                            .setDeviceName(d.device()))
                    .setHealth(io.devhealth.schema.proto.drahealth.v1.HealthStatus.forNumber(d.health().ordinal()))
                    .setLastUpdatedTime(now)
                    .setHealthCheckTimeoutSeconds(d.timeoutSeconds())
                    .setMessage(d.message()));
        }
        return response.build();
    }

    /** One open server stream; all writes to the observer go through this object's monitor. */
    private static final class HealthStream<R> {
        private final String version;
        private final ServerCallStreamObserver<R> observer;
        private final Function<List<DeviceState>, R> encoder;
        private boolean ended;

        HealthStream(String version, ServerCallStreamObserver<R> observer, Function<List<DeviceState>, R> encoder) {
            this.version = version;
            this.observer = observer;
            this.encoder = encoder;
        }

        synchronized boolean send(List<DeviceState> devices) {
            if (ended || observer.isCancelled()) {
                return false;
            }
            try {
                observer.onNext(encoder.apply(devices));
                return true;
            } catch (RuntimeException e) {
                LOGGER.debug("dra stream send failed version={} error={}", version, e.toString());
                return false;
            }
        }

        synchronized void fail(Status status) {
            if (ended) {
                return;
            }
            ended = true;
            try {
                observer.onError(status.asRuntimeException());
            } catch (RuntimeException e) {
                LOGGER.debug("dra stream end failed version={} error={}", version, e.toString());
            }
        }

        synchronized void complete() {
            if (ended) {
                return;
            }
            ended = true;
            try {
                observer.onCompleted();
            } catch (RuntimeException e) {
                LOGGER.debug("dra stream end failed version={} error={}", version, e.toString());
            }
        }
    }

    private final class V1Alpha1HealthService
            extends io.devhealth.schema.proto.drahealth.v1alpha1.DRAResourceHealthGrpc.DRAResourceHealthImplBase {
        @Override
        public void nodeWatchResources(io.devhealth.schema.proto.drahealth.v1alpha1.NodeWatchResourcesRequest request,
                StreamObserver<io.devhealth.schema.proto.drahealth.v1alpha1.NodeWatchResourcesResponse> observer) {
            openStream(V1ALPHA1, observer, FakeDraDriver.this::toV1Alpha1);
        }
    }

    private final class V1HealthService extends DRAResourceHealthGrpc.DRAResourceHealthImplBase {
        @Override
        public void nodeWatchResources(io.devhealth.schema.proto.drahealth.v1.NodeWatchResourcesRequest request,
                StreamObserver<io.devhealth.schema.proto.drahealth.v1.NodeWatchResourcesResponse> observer) {
            openStream(V1, observer, FakeDraDriver.this::toV1);
        }
    }

    private final class RegistrationService extends RegistrationGrpc.RegistrationImplBase {
        @Override
        public void getInfo(InfoRequest request, StreamObserver<PluginInfo> observer) {
            LOGGER.debug("registration GetInfo driver={}", driverName);
            observer.onNext(pluginInfo());
            observer.onCompleted();
        }

        @Override
        public void notifyRegistrationStatus(RegistrationStatus request,
                StreamObserver<RegistrationStatusResponse> observer) {
            registrationStatuses.add(request);
            LOGGER.info("registration status driver={} registered={} error={}", driverName,
                    request.getPluginRegistered(), request.getError());
            observer.onNext(RegistrationStatusResponse.getDefaultInstance());
            observer.onCompleted();
        }
    }

    /** Builds and starts a {@link FakeDraDriver}. */
    public static final class Builder {
        private String driverName;
        private Path serviceSocket;
        private Path registrationDir;
        private Set<String> healthVersions = Set.of(V1ALPHA1);
        private List<String> supportedVersions;
        private Clock clock = Clock.systemUTC();

        private Builder() {
        }

        /**
         * @param name the driver name, e.g. {@code gpu.example.com} (required)
         * @return this builder
         */
        public Builder driverName(String name) {
            this.driverName = Objects.requireNonNull(name, "name");
            return this;
        }

        /**
         * @param socket the service socket, e.g. {@code <tmp>/plugins/gpu.example.com/dra.sock} (required;
         *     at most 107 bytes as an absolute path)
         * @return this builder
         */
        public Builder serviceSocket(Path socket) {
            this.serviceSocket = Objects.requireNonNull(socket, "socket");
            return this;
        }

        /**
         * Enables the registration socket {@code <dir>/<driver>-reg.sock}. Without this call the driver
         * does not register.
         *
         * @param dir the plugin registry directory
         * @return this builder
         */
        public Builder registrationDir(Path dir) {
            this.registrationDir = Objects.requireNonNull(dir, "dir");
            return this;
        }

        /**
         * @param versions the health API versions to serve: any of {@value #V1ALPHA1}, {@value #V1};
         *     empty means no health service (calls get {@code UNIMPLEMENTED}). Default {@value #V1ALPHA1},
         *     the only version released kubelets speak.
         * @return this builder
         */
        public Builder healthVersions(Set<String> versions) {
            for (String v : versions) {
                if (!KNOWN_VERSIONS.contains(v)) {
                    throw new IllegalArgumentException("unknown health API version '" + v + "', expected one of "
                            + KNOWN_VERSIONS);
                }
            }
            this.healthVersions = new LinkedHashSet<>(versions);
            return this;
        }

        /**
         * Overrides what {@code GetInfo} advertises in {@code supported_versions}, independently of what is
         * served (for example to advertise a health version that is not served, or to hide one that is).
         * Default: {@code v1.DRAPlugin} plus {@code <version>.DRAResourceHealth} for each served version.
         *
         * @param versions the registration strings
         * @return this builder
         */
        public Builder supportedVersions(List<String> versions) {
            this.supportedVersions = List.copyOf(versions);
            return this;
        }

        /**
         * @param value the clock for {@code last_updated_time}; default the system UTC clock
         * @return this builder
         */
        public Builder clock(Clock value) {
            this.clock = Objects.requireNonNull(value, "clock");
            return this;
        }

        /**
         * Binds the sockets and starts serving.
         *
         * @return the running driver
         * @throws IllegalStateException if the driver name or the service socket is missing
         * @throws IllegalArgumentException if a socket path is too long
         */
        public FakeDraDriver start() {
            if (driverName == null || driverName.isBlank()) {
                throw new IllegalStateException("driverName is required");
            }
            if (serviceSocket == null) {
                throw new IllegalStateException("serviceSocket is required");
            }
            return new FakeDraDriver(this);
        }
    }
}
