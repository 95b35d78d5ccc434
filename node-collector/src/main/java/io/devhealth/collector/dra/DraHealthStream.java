package io.devhealth.collector.dra;

import io.devhealth.collector.grpc.UnixChannels;
import io.devhealth.schema.avro.HealthStatus;
import io.devhealth.schema.proto.drahealth.v1.DRAResourceHealthGrpc;
import io.devhealth.schema.proto.drahealth.v1.NodeWatchResourcesRequest;
import io.devhealth.schema.proto.drahealth.v1.NodeWatchResourcesResponse;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one authoritative {@code NodeWatchResources} stream of one DRA driver endpoint.
 *
 * <p>Reconnects with backoff after the stream ends or fails; stops for good on {@code UNIMPLEMENTED}
 * (the kubelet's 5 s retry against such drivers floods their logs, upstream #141855).
 */
public final class DraHealthStream implements AutoCloseable {

    private static final Logger LOGGER = LoggerFactory.getLogger(DraHealthStream.class);

    private final String driver;
    private final Path socket;
    private final HealthApiVersion version;
    private final DriverStreamListener listener;
    private final ScheduledExecutorService scheduler;
    private final Backoff backoff;
    private final Object lock = new Object();
    private ManagedChannel channel;
    private Context.CancellableContext call;
    private boolean closed;

    public DraHealthStream(String driver, Path socket, HealthApiVersion version, DriverStreamListener listener,
                           ScheduledExecutorService scheduler, Duration maxBackoff) {
        this.driver = driver;
        this.socket = socket;
        this.version = version;
        this.listener = listener;
        this.scheduler = scheduler;
        this.backoff = new Backoff(Duration.ofMillis(200), maxBackoff);
    }

    public String driver() {
        return driver;
    }

    public Path socket() {
        return socket;
    }

    public void start() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            if (channel == null) {
                channel = UnixChannels.open(socket);
            }
            call = Context.current().withCancellation();
            LOGGER.info("dra stream connecting driver={} socket={} api={}", driver, socket, version.registrationName());
            call.run(this::watch);
        }
    }

    private void watch() {
        switch (version) {
            case V1 -> DRAResourceHealthGrpc.newStub(channel).nodeWatchResources(
                    NodeWatchResourcesRequest.getDefaultInstance(), new Observer<>(DraHealthStream::fromV1));
            case V1ALPHA1 -> io.devhealth.schema.proto.drahealth.v1alpha1.DRAResourceHealthGrpc.newStub(channel).nodeWatchResources(
                    io.devhealth.schema.proto.drahealth.v1alpha1.NodeWatchResourcesRequest.getDefaultInstance(),
                    new Observer<>(DraHealthStream::fromV1alpha1));
        }
    }

    private final class Observer<T> implements StreamObserver<T> {
        private final java.util.function.Function<T, List<ObservedDevice>> convert;
        private boolean first = true;

        Observer(java.util.function.Function<T, List<ObservedDevice>> convert) {
            this.convert = convert;
        }

        @Override
        public void onNext(T response) {
            if (first) {
                first = false;
                backoff.reset();
                listener.onStreamUp(driver, version);
            }
            listener.onSnapshot(driver, convert.apply(response));
        }

        @Override
        public void onError(Throwable error) {
            Status status = Status.fromThrowable(error);
            if (status.getCode() == Status.Code.CANCELLED && isClosed()) {
                return;
            }
            if (status.getCode() == Status.Code.UNIMPLEMENTED) {
                LOGGER.warn("dra driver does not serve health driver={} api={} status={}", driver, version.registrationName(), status);
                listener.onUnsupported(driver, "UNIMPLEMENTED: " + status.getDescription());
                return;
            }
            lost(status.getCode() + (status.getDescription() == null ? "" : ": " + status.getDescription()));
        }

        @Override
        public void onCompleted() {
            lost("stream ended by driver");
        }
    }

    private void lost(String reason) {
        if (isClosed()) {
            return;
        }
        listener.onStreamDown(driver, reason);
        Duration delay = backoff.next();
        LOGGER.warn("dra stream lost driver={} reason=\"{}\" reconnectInMs={}", driver, reason, delay.toMillis());
        scheduler.schedule(this::start, delay.toMillis(), TimeUnit.MILLISECONDS);
    }

    private boolean isClosed() {
        synchronized (lock) {
            return closed;
        }
    }

    static List<ObservedDevice> fromV1(NodeWatchResourcesResponse response) {
        return response.getDevicesList().stream()
                .map(d -> new ObservedDevice(d.getDevice().getPoolName(), d.getDevice().getDeviceName(),
                        health(d.getHealthValue()), d.getMessage(), Math.max(0, d.getHealthCheckTimeoutSeconds())))
                .toList();
    }

    static List<ObservedDevice> fromV1alpha1(io.devhealth.schema.proto.drahealth.v1alpha1.NodeWatchResourcesResponse response) {
        return response.getDevicesList().stream()
                .map(d -> new ObservedDevice(d.getDevice().getPoolName(), d.getDevice().getDeviceName(),
                        health(d.getHealthValue()), d.getMessage(), Math.max(0, d.getHealthCheckTimeoutSeconds())))
                .toList();
    }

    /** As the kubelet maps it: HEALTHY and UNHEALTHY, anything else (including numbers we do not know) UNKNOWN. */
    static HealthStatus health(int wireValue) {
        return switch (wireValue) {
            case 1 -> HealthStatus.HEALTHY;
            case 2 -> HealthStatus.UNHEALTHY;
            default -> HealthStatus.UNKNOWN;
        };
    }

    @Override
    public void close() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            if (call != null) {
                call.cancel(null);
            }
            if (channel != null) {
                channel.shutdownNow();
            }
        }
    }
}
